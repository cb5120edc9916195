//! The schedlab-runner binary (what `make runner` links statically for the
//! QEMU oracle's initramfs): the command lives in the library.

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(schedlab_runner::main_with_args(std::env::args().collect()))
}

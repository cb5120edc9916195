# Type stub for the Rust extension built from crates/schedlab-python.

def run(
    text: str,
    source: str,
    seed: int,
    overrides: list[tuple[str, str]],
    check: bool,
    trace: str | None = None,
    perfetto: str | None = None,
    strict: bool = False,
    heap_budget: int | None = None,
) -> str: ...
def check(text: str, source: str, overrides: list[tuple[str, str]]) -> str: ...
def version() -> str: ...
def catalog() -> str: ...
def runner_main(argv: list[str]) -> int: ...

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
    progress: Progress | None = None,
) -> str: ...

class Progress:
    def __init__(self) -> None: ...
    def read(self) -> tuple[int, int, int]: ...

def check(text: str, source: str, overrides: list[tuple[str, str]]) -> str: ...
def version() -> str: ...
def catalog() -> str: ...
def runner_main(argv: list[str]) -> int: ...

MIN_NICE: int
MAX_NICE: int
MAX_RT_PRIORITY: int

"""The report crosses into Python as objects made by the binding
(crates/schedlab-python/src/pyreport.rs), not as JSON text parsed again:
the objects must be what `json.loads` makes of the core's JSON text, key
order included, for every kind of section a report has."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest

from schedlab import native
from schedlab.scenarios import read_text

pytestmark = pytest.mark.native

REPO = Path(__file__).resolve().parents[2]

#: (scenario, overrides): reports with groups, cgroups, RT, memory and
#: reclaim, block IO and workqueues, CPU frequency, mpstat samples.
CASES = [
    ("scenarios/textbook/cgroup-weights.toml", [("measure.duration", '"300ms"')]),
    ("scenarios/seeds/rt-migrate.toml", [("measure.duration", '"200ms"')]),
    ("scenarios/seeds/kswapd-threads.toml", [("measure.duration", '"200ms"')]),
    ("scenarios/seeds/kworker-stack.toml", [("measure.duration", '"200ms"'), ("dbench.clients", "4")]),
    ("scenarios/textbook/mixed-nice-smt.toml", [("measure.samples", "true"), ("measure.duration", '"100ms"')]),
]


@pytest.mark.parametrize(("path", "overrides"), CASES, ids=[Path(c[0]).stem for c in CASES])
def test_the_objects_are_the_json_texts(path: str, overrides: list[tuple[str, str]]) -> None:
    text = read_text(REPO / path)
    mod = native.load()
    objects = mod.run(text, path, 1, overrides, False)
    parsed = json.loads(mod.run_json(text, path, 1, overrides))
    assert objects == parsed
    # The same keys in the same order, the same float reprs, None for null.
    assert json.dumps(objects) == json.dumps(parsed)


def test_the_collector_is_back_on_and_atomic_lists_untracked() -> None:
    """The binding pauses the cyclic collector while it makes a report and
    turns it back on; lists of numbers are left untracked, lists of dicts
    are not (a dict is a container)."""
    text = read_text(REPO / "scenarios/textbook/n-hogs-n-cpus.toml")
    assert gc.isenabled()
    r = native.load().run(text, "n-hogs", 1, [("measure.duration", '"50ms"')], False)
    assert gc.isenabled()
    hist = r["tasks"][0]["wakeup_latency_hist_us"]
    assert isinstance(hist, list) and all(isinstance(x, int) for x in hist)
    assert not gc.is_tracked(hist)
    assert gc.is_tracked(r["tasks"])
    gc.disable()
    try:
        native.load().run(text, "n-hogs", 1, [("measure.duration", '"50ms"')], False)
        assert not gc.isenabled(), "a disabled collector stays disabled"
    finally:
        gc.enable()


def test_objects_of_one_shape_are_independent() -> None:
    """Dicts of one layout start as copies of one template holding the
    first one's immutable values (ints, strings, None), and equal short
    strings are one object: changing one row changes no other, and no later
    report sees it."""
    text = read_text(REPO / "scenarios/textbook/n-hogs-n-cpus.toml")
    mod = native.load()
    r = mod.run(text, "n-hogs", 1, [("measure.duration", '"50ms"')], False)
    doms = [d for c in r["schedstat"]["cpus"] for d in c["domains"]]
    assert len(doms) > 1
    before = json.dumps(doms[1:])
    doms[0]["alb_count"] = 12345
    doms[0]["name"] += "!"
    doms[0]["lb_count"][0] = 7
    assert json.dumps(doms[1:]) == before
    again = mod.run(text, "n-hogs", 1, [("measure.duration", '"50ms"')], False)
    assert json.dumps(again) == json.dumps(mod.run(text, "n-hogs", 1, [("measure.duration", '"50ms"')], False))
    assert again["schedstat"]["cpus"][0]["domains"][0]["alb_count"] != 12345

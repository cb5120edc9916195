"""CPU frequency (cpufreq/, docs/models/cpufreq.md): a task's work runs at its
CPU's frequency, the governors pick the P-states the kernel's would, a core
runs within its package's turbo bin, and turbostat's columns and the
cpu_frequency tracepoint come out; `machine.cpufreq = "none"` (every preset's
default) leaves a run as it was."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import schedlab

#: Two sockets of E5-2670 v3 cut down to 4 cores each, no SMT: hogs pinned
#: to the first package, one periodic task on the second.
SCEN = """
name = "cpufreq"
[machine]
sockets = 2
cores_per_socket = 4
cpufreq = "{cpufreq}"
[kernel]
version = "5.5"
vmstat_kworkers = false
{governor}
[measure]
warmup = "200ms"
duration = "1s"
[[task]]
name = "hog"
count = {hogs}
cpus = "0-3"
program = [{{ loop = {{ count = 0, body = [{{ run = "100ms" }}] }} }}]
[[task]]
name = "periodic"
cpus = "4"
program = [{{ loop = {{ count = 0, body = [{{ run = "1ms" }}, {{ sleep = "9ms" }}] }} }}]
"""


def run(cpufreq: str = "e5-2670v3", governor: str = "", hogs: int = 1, **kw: Any) -> Any:
    g = f'cpufreq_governor = "{governor}"' if governor else ""
    return schedlab.run_scenario(text=SCEN.format(cpufreq=cpufreq, governor=g, hogs=hogs), check=True, **kw)


def row(r: Any, cpu: int) -> Any:
    return next(c for c in r["cpufreq"]["cpus"] if c["cpu"] == cpu)


def test_a_busy_cpu_climbs_to_the_turbo_bin_of_its_package() -> None:
    # intel_pstate (5.5, no HWP): busy 100 % -> 1.25 x 31 capped at 31; one
    # core active in the package: the 1-core turbo, 3.1 GHz.
    r = run(hogs=1)
    assert r["cpufreq"]["governor"] == "powersave"
    assert row(r, 0)["bzy_mhz"] == pytest.approx(3100, abs=1)
    # Four busy cores: the 4-core bin, 2.8 GHz.
    r4 = run(hogs=4)
    assert all(row(r4, c)["bzy_mhz"] == pytest.approx(2800, abs=1) for c in range(4))
    assert row(r4, 0)["busy_pct"] > 99


def test_a_lightly_loaded_cpu_stays_low_and_its_task_runs_slower() -> None:
    # The periodic task keeps CPU 4 about 10-25 % busy: intel_pstate asks
    # for 1.25 x 31 x busy, no more than about 1.2-1.5 GHz, so its 1 ms of
    # work (given at 3.1 GHz) takes 2-2.6 ms.
    r = run()
    p = row(r, 4)
    assert 1200 <= p["bzy_mhz"] < 1600
    slow = next(t for t in r["tasks"] if t["comm"] == "periodic")["window"]
    fast = next(t for t in run(cpufreq="none")["tasks"] if t["comm"] == "periodic")["window"]
    assert slow["runtime_ns"] / slow["nr_switches"] > 1.9 * fast["runtime_ns"] / fast["nr_switches"]


def test_performance_runs_every_busy_cpu_at_the_top_and_schedutil_follows_util() -> None:
    r = run(governor="performance")
    assert row(r, 4)["bzy_mhz"] == pytest.approx(3100, abs=1)
    s = run(governor="schedutil")
    assert row(s, 0)["bzy_mhz"] == pytest.approx(3100, abs=1)
    assert row(s, 4)["bzy_mhz"] < 2000


def test_without_a_processor_nothing_changes_and_no_section_appears() -> None:
    r = run(cpufreq="none")
    assert "cpufreq" not in r
    again = run(cpufreq="none")
    assert r == again


def test_the_cpu_frequency_tracepoint_is_written(tmp_path: Path) -> None:
    trace = tmp_path / "t.txt"
    run(trace=str(trace))
    lines = [x for x in trace.read_text().splitlines() if "cpu_frequency:" in x]
    assert lines, "no cpu_frequency events"
    assert any("state=3100000 cpu_id=0" in x for x in lines)


@pytest.mark.parametrize(
    ("key", "value", "accepted"),
    [
        ("machine.cpufreq", "pentium4", "e5-2670v3"),
        ("kernel.cpufreq_governor", "ondemand", "schedutil"),
    ],
)
def test_an_unknown_processor_or_governor_is_refused_with_what_is_accepted(key: str, value: str, accepted: str) -> None:
    with pytest.raises(schedlab.SchedlabError) as e:
        schedlab.run_scenario(text=SCEN.format(cpufreq="none", governor="", hogs=1), overrides={key: value})
    assert key in str(e.value) and accepted in str(e.value)


def test_a_governor_without_a_processor_is_refused() -> None:
    with pytest.raises(schedlab.SchedlabError, match=r"kernel.cpufreq_governor.*machine.cpufreq"):
        run(cpufreq="none", governor="performance")


#: turbostat 5.5's default column order (tools/power/x86/turbostat/turbostat.c
#: print_header(), on a Haswell-EP with the hsx idle states): the model's
#: columns must appear in this order, as a subsequence.
TURBOSTAT_ORDER = [
    "Package",
    "Core",
    "CPU",
    "Avg_MHz",
    "Busy%",
    "Bzy_MHz",
    "TSC_MHz",
    "IRQ",
    "SMI",
    "POLL",
    "C1",
    "C1E",
    "C3",
    "C6",
    "POLL%",
    "C1%",
    "C1E%",
    "C3%",
    "C6%",
    "CPU%c1",
    "CPU%c3",
    "CPU%c6",
    "CPU%c7",
    "CoreTmp",
    "PkgTmp",
    "Pkg%pc2",
    "Pkg%pc3",
    "Pkg%pc6",
    "PkgWatt",
    "RAMWatt",
    "PKG_%",
    "RAM_%",
]


def test_turbostat_prints_its_columns_in_its_order_and_formats(tmp_path: Path) -> None:
    import re

    from schedlab.turbostat import format_turbostat

    r = schedlab.run_scenario(
        text=SCEN.format(cpufreq="e5-2670v3", governor="", hogs=1).replace(
            'cpufreq = "e5-2670v3"', 'cpufreq = "e5-2670v3"\ncpuidle = "hsx"'
        )
    )
    lines = format_turbostat(r).splitlines()
    header = lines[0].split("\t")
    it = iter(TURBOSTAT_ORDER)
    assert all(any(c == t for t in it) for c in header), header
    assert header[:3] == ["Package", "Core", "CPU"]
    assert len(lines) == 2 + 8
    summary = lines[1].split("\t")
    assert summary[:3] == ["-", "-", "-"]
    thread_cols = header.index("CPU%c1") + 1
    for i, ln in enumerate(lines[1:]):
        f = dict(zip(header, ln.split("\t")))
        # The summary and each package's first CPU carry every column; the
        # others (no SMT here: every CPU is its core's first thread) end
        # before the package's (turbostat prints those once per package).
        want = len(header) if i in (0, 1, 5) else len(header) - 1
        assert len(f) == want >= thread_cols, (i, ln)
        for col, v in f.items():
            if col.endswith("MHz") or col in ("POLL", "C1", "C1E", "C3", "C6"):
                assert re.fullmatch(r"\d+", v), (col, v)
            elif col.endswith("%") or col.startswith("CPU%") or col == "PkgWatt":
                assert re.fullmatch(r"\d+\.\d\d", v), (col, v)
    cpu0 = dict(zip(header, lines[2].split("\t")))
    assert (cpu0["CPU"], cpu0["Bzy_MHz"], cpu0["TSC_MHz"]) == ("0", "3100", "2300")
    assert float(cpu0["Busy%"]) == pytest.approx(row(r, 0)["busy_pct"], abs=0.01)
    # An idle CPU's time is in its idle states, not missing.
    cpu5 = dict(zip(header, lines[2 + 5].split("\t")))
    assert float(cpu5["C6%"]) + float(cpu5["C3%"]) + float(cpu5["C1E%"]) > 99
    assert "no CPU frequency" in format_turbostat(run(cpufreq="none"))
    # The summary's PkgWatt sums the packages'.
    pkg = [float(dict(zip(header, lines[i].split("\t")))["PkgWatt"]) for i in (2, 6)]
    assert float(dict(zip(header, summary))["PkgWatt"]) == pytest.approx(sum(pkg), abs=0.02)


def test_energy_follows_the_frequency_and_the_busy_cores() -> None:
    # One hog at 3.1 GHz on package 0: its core's 2.0 W + 0.176 x 3.1³ W,
    # the package's 17.2 W of uncore, the idle cores' 0.1 W each.
    r = run(governor="performance")
    pk = {p["package"]: p["watts"] for p in r["cpufreq"]["packages"]}
    assert pk[0] == pytest.approx(17.2 + 2.0 + 0.176 * 3.1**3 + 3 * 0.1, abs=0.3)
    # Four hogs at 2.8 GHz draw more, and schedutil's low P-state on the
    # periodic task's package saves against performance.
    r4 = run(hogs=4, governor="performance")
    assert r4["cpufreq"]["packages"][0]["watts"] > pk[0] + 2 * (2.0 + 0.176 * 2.8**3)
    s = run(governor="schedutil")
    assert s["cpufreq"]["packages"][1]["watts"] < pk[1]
    assert r["cpufreq"]["energy_j"] == pytest.approx(sum(pk.values()) * 1.0, rel=0.01)


DUTY = """
name = "duty"
[machine]
sockets = 1
cores_per_socket = 4
cpufreq = "e5-2670v3"
[kernel]
version = "{version}"
cpufreq_governor = "schedutil"
vmstat_kworkers = false
[measure]
warmup = "1s"
duration = "2s"
[[task]]
name = "duty"
cpus = "1"
program = [{{ loop = {{ count = 0, body = [{{ run = "6ms" }}, {{ sleep = "4ms" }}] }} }}]
"""


def test_frequency_invariance_lifts_schedutil_off_the_floor() -> None:
    # 6 ms of work (at 3.1 GHz) every 4 ms of sleep. Without invariance (5.5)
    # schedutil asks for 1.25 x cur x util: busy about 79 % at 1.2 GHz sits
    # at the tipping point, so the CPU stays near the bottom. With it (5.7+,
    # PELT's clock at cur / 2.8 GHz) the fixed point is 1.25 x 3.1 x util =
    # f, util = busy(f) x f / 2.8: about 1.8 GHz.
    def bzy(version: str) -> float:
        r = schedlab.run_scenario(text=DUTY.format(version=version))
        return float(row(r, 1)["bzy_mhz"])

    assert bzy("5.5") < 1450
    assert 1650 < bzy("6.1") < 1950


def test_a_memory_bound_share_does_not_slow_down_with_the_cpu() -> None:
    # The periodic task at 1.2-1.6 GHz: all of its work stretches; with
    # half of it bound by memory, only the other half does.
    def per_switch(text: str) -> float:
        r = schedlab.run_scenario(text=text)
        w = next(t for t in r["tasks"] if t["comm"] == "periodic")["window"]
        return w["runtime_ns"] / w["nr_switches"]

    base = SCEN.format(cpufreq="e5-2670v3", governor='cpufreq_governor = "performance"', hogs=1)
    text = SCEN.format(cpufreq="e5-2670v3", governor="", hogs=1)
    mem = text.replace('name = "periodic"', 'name = "periodic"\nmemory_bound = 0.5')
    full, half, fast = per_switch(text), per_switch(mem), per_switch(base)
    assert fast < half < full
    # Speed 1 / (0.5 x 3.1 / f + 0.5) against 1 / (3.1 / f).
    assert half / fast == pytest.approx(0.5 + 0.5 * full / fast, rel=0.08)
    with pytest.raises(schedlab.SchedlabError, match="memory_bound"):
        schedlab.run_scenario(text=text.replace('name = "periodic"', 'name = "periodic"\nmemory_bound = 1.5'))


def test_the_text_report_says_what_the_cpus_ran_at() -> None:
    from schedlab.report import format_run_report

    text = format_run_report(run(governor="performance"))
    assert "CPU frequency (Intel Xeon E5-2670 v3 (Haswell-EP); performance)" in text
    assert "PkgWatt" in text
    assert "CPU frequency" not in format_run_report(run(cpufreq="none"))


def test_acpi_cpufreq_with_ondemand_turbos_a_busy_cpu_and_scales_a_light_one() -> None:
    acpi = 'cpufreq_driver = "acpi-cpufreq"'
    r = schedlab.run_scenario(text=SCEN.format(cpufreq="e5-2670v3", governor=acpi, hogs=1))
    assert r["cpufreq"]["governor"] == "ondemand"
    assert row(r, 0)["bzy_mhz"] == pytest.approx(3100, abs=1)
    # The periodic CPU, 20-25 % busy: 1.2 + load x 1.1 GHz, about 1.4-1.6.
    assert 1200 <= row(r, 4)["bzy_mhz"] < 1700
    low = schedlab.run_scenario(
        text=SCEN.format(cpufreq="e5-2670v3", governor=acpi + '\ncpufreq_governor = "powersave"', hogs=1)
    )
    assert row(low, 0)["bzy_mhz"] == pytest.approx(1200, abs=1)
    with pytest.raises(schedlab.SchedlabError, match="acpi-cpufreq"):
        run(governor="ondemand")
    with pytest.raises(schedlab.SchedlabError, match=r"kernel\.cpufreq_driver"):
        schedlab.run_scenario(text=SCEN.format(cpufreq="e5-2670v3", governor='cpufreq_driver = "p4-clockmod"', hogs=1))


def test_schedutil_on_an_hwp_part_runs_without_hwp_before_5_9() -> None:
    # Passive mode implied no_hwp until 5.9: on the Skylake the governor's
    # requests are the P-states, evaluated every 500 us; from 5.9 (HWP in
    # passive mode) every 5 ms. A hog starting on an idle CPU (both kernels
    # frequency invariant) climbs from the floor twice as often on 5.7 in
    # its first 40 ms, and so runs faster on average.
    def hog(version: str) -> Any:
        text = SCEN.format(cpufreq="e3-1240v5", governor='cpufreq_governor = "schedutil"', hogs=1)
        for old, new in (("5.5", version), ('warmup = "200ms"', 'warmup = "0ms"'), ('"1s"', '"40ms"')):
            text = text.replace(old, new)
        return row(schedlab.run_scenario(text=text), 0)

    before, after = hog("5.7"), hog("6.1")
    assert before["transitions"] >= 2 * after["transitions"] > 0
    assert before["avg_mhz"] > after["avg_mhz"] + 150


def test_freq_invariance_is_the_series_not_the_version() -> None:
    # The series applied to 5.5 behaves as 5.7+ does; taken off 6.1 as 5.5.
    def bzy(version: str, inv: str) -> float:
        text = DUTY.format(version=version).replace("[measure]", f"freq_invariance = {inv}\n[measure]")
        r = schedlab.run_scenario(text=text)
        assert r["cpufreq"]["freq_invariance"] == (inv == "true")
        return float(row(r, 1)["bzy_mhz"])

    assert 1650 < bzy("5.5", "true") < 1950
    assert bzy("6.1", "false") < 1450
    with pytest.raises(schedlab.ScenarioError, match=r"kernel\.freq_invariance.*machine\.cpufreq"):
        schedlab.run_scenario(text=SCEN.format(cpufreq="none", governor="freq_invariance = true", hogs=1))

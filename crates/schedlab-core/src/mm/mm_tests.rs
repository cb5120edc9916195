//! The reclaim rules end to end on small machines: when kswapd wakes and
//! sleeps, when a reader reclaims directly, and that O_DIRECT bypasses it.

use crate::report::Report;
use crate::{run_text, RunOptions};

fn run(readers: usize, extra: &str) -> Report {
    run_v(readers, "4.16", extra)
}

fn run_v(readers: usize, version: &str, extra: &str) -> Report {
    let text = format!(
        r#"
name = "mm"
[machine]
preset = "4cpu"
memory = "512MiB"
[[machine.disk]]
name = "d"
queues = "per_cpu"
queue_depth = 256
read = "50us"
bandwidth = "2GiB/s"
[kernel]
version = "{version}"
[memory]
page_cache = "full"
[measure]
warmup = "100ms"
duration = "1s"
[[task]]
name = "dd"
count = {readers}
program = [{{ loop = {{ count = 0, body = [{{ read = {{ disk = "d", size = "1MiB" }} }}] }} }}]
{extra}
"#
    );
    run_text(&text, "mm.toml", &[], &RunOptions { seed: 1, check: true, ..Default::default() }).expect("runs")
}

fn vm(r: &Report, k: &str) -> u64 {
    r.mm.as_ref().unwrap().vmstat[k]
}

#[test]
fn one_reader_is_kept_up_with_by_kswapd() {
    let r = run(1, "");
    let mm = r.mm.as_ref().unwrap();
    assert!(vm(&r, "pgscan_kswapd") > 0, "kswapd woke below the low watermark");
    assert_eq!(vm(&r, "allocstall_normal"), 0, "no direct reclaim");
    assert!(vm(&r, "pageoutrun") > 0);
    // It naps between runs: the node is balanced again each time.
    assert!(vm(&r, "kswapd_low_wmark_hit_quickly") + vm(&r, "kswapd_high_wmark_hit_quickly") > 0);
    let n = &mm.nodes[0];
    assert!(n.free_pages >= n.min_pages, "{n:?}");
    // Steady state: what is read is reclaimed.
    let (a, f) = (vm(&r, "pgalloc_normal") as f64, vm(&r, "pgfree") as f64);
    assert!((a - f).abs() / a < 0.1, "alloc {a} free {f}");
    assert_eq!(mm.kswapd.len(), 1);
    assert_eq!(mm.kswapd[0].comm, "kswapd0");
}

#[test]
fn a_starved_kswapd_leaves_readers_to_reclaim_directly() {
    // kswapd at nice 19 beside a CPU hog on every CPU: it gets a sliver of
    // CPU, free pages reach min and the readers reclaim directly.
    let hogs =
        "[[task]]\nname = \"hog\"\ncount = 4\nprogram = [{ loop = { count = 0, body = [{ run = \"10ms\" }] } }]\n";
    let r = run(8, &format!("{hogs}[kernel.vm]\nkswapd_nice = 19\n"));
    assert!(vm(&r, "allocstall_normal") > 0);
    assert!(vm(&r, "pgscan_direct") > 0);
    // A direct reclaim at DEF_PRIORITY scans its whole target (the
    // inactive list >> 12), far more than SWAP_CLUSTER_MAX.
    let per = vm(&r, "pgscan_direct") / vm(&r, "allocstall_normal");
    assert!(per > 16, "{per} pages per direct reclaim");
    let a = &r.mm.as_ref().unwrap().alloc[0];
    assert_eq!(a.group, "dd");
    assert!(a.direct_reclaims > 0 && a.slow_max_us > 0.0, "{a:?}");
}

#[test]
fn a_reclaimers_pages_wait_on_its_per_cpu_list_until_a_drain() {
    // The starved readers: a direct reclaim at DEF_PRIORITY frees a batch
    // of pages onto its CPU's per-CPU list, which NR_FREE_PAGES does not
    // count; the refills that took the node below min leave the retry
    // failing, and it drains every CPU's lists — by IPIs on 2.6.35, by
    // each CPU's mm_percpu_wq kworker on 4.16, by the caller on 6.1.
    let hogs =
        "[[task]]\nname = \"hog\"\ncount = 4\nprogram = [{ loop = { count = 0, body = [{ run = \"10ms\" }] } }]\n";
    for (v, kworkers) in [("2.6.35", false), ("4.16", true), ("6.1", false)] {
        let r = run_v(8, v, &format!("{hogs}[kernel.vm]\nkswapd_nice = 19\n"));
        let a = &r.mm.as_ref().unwrap().alloc[0];
        assert!(a.drains > 0, "{v}: {a:?}");
        let works =
            r.workqueues.as_ref().map_or(0, |w| w.iter().filter(|w| w.name == "mm_percpu_wq").map(|w| w.works).sum());
        if kworkers {
            assert!(works >= a.drains, "{v}: {works} works for {} drains", a.drains);
        } else {
            assert!(works < 10, "{v}: {works} mm_percpu_wq works (vmstat's only)");
        }
    }
}

#[test]
fn direct_io_bypasses_the_page_cache() {
    let text = "[[task]]\nname = \"ddd\"\ncount = 2\nprogram = [{ loop = { count = 0, body = [{ read = { disk = \"d\", size = \"1MiB\", direct = true } }] } }]\n";
    let r = run(0, text);
    assert_eq!(vm(&r, "pgalloc_normal"), 0);
    assert!(r.mm.as_ref().unwrap().read_kbs > 0.0);
}

#[test]
fn threads_per_node_are_named_as_p3_names_them() {
    let r = run(1, "[kernel.vm]\nkswapd_threads = 4\n");
    let names: Vec<&str> = r.mm.as_ref().unwrap().kswapd.iter().map(|k| k.comm.as_str()).collect();
    assert_eq!(names, ["kswapd0:0", "kswapd0:1", "kswapd0:2", "kswapd0:3"]);
}

#[test]
fn auto_runs_one_thread_per_idle_cpus_and_parks_the_rest() {
    // 4 CPUs, 1 reader: about 3 CPUs idle, so { auto = 1 } allows about
    // 3 threads of 4; { auto = 4 } allows the minimum, 1, and the other
    // threads never run.
    let wide = run(1, "[kernel.vm]\nkswapd_threads = { auto = 1, max = 4 }\n");
    let mm = wide.mm.as_ref().unwrap();
    assert!(mm.nodes[0].kswapd_allowed >= 2.0, "{:?}", mm.nodes[0]);
    let narrow = run(1, "[kernel.vm]\nkswapd_threads = { auto = 4, max = 4 }\n");
    let mm = narrow.mm.as_ref().unwrap();
    assert_eq!(mm.nodes[0].kswapd_allowed, 1.0);
    assert!(mm.kswapd[0].cpu_pct > 0.0);
    assert!(mm.kswapd[1..].iter().all(|k| k.cpu_pct == 0.0), "{:?}", mm.kswapd);
    assert!(mm.kswapd_threads.starts_with("auto"));
}

#[test]
fn an_anonymous_hog_is_reclaimed_into_zswap() {
    // 512 MiB, no file pages: a hog faulting in memory without end pushes
    // its own pages into zswap once free memory reaches the watermarks.
    let text = |swap: &str| {
        format!(
            "name = \"z\"\n[machine]\npreset = \"4cpu\"\nmemory = \"512MiB\"\n[kernel]\nversion = \"4.16\"\n\
             [memory]\nswap = \"{swap}\"\n[measure]\nwarmup = \"100ms\"\nduration = \"1s\"\n[[task]]\nname = \"hog\"\n\
             program = [{{ loop = {{ count = 0, body = [{{ anon = {{ size = \"64MiB\" }} }}] }} }}]\n"
        )
    };
    let opts = RunOptions { seed: 1, check: true, ..Default::default() };
    let r = run_text(&text("zswap"), "z.toml", &[], &opts).expect("runs");
    let out = vm(&r, "zswpout");
    assert!(out > 0, "zswpout {out}");
    assert_eq!(out, vm(&r, "pgsteal_kswapd") + vm(&r, "pgsteal_direct"));
    // One kswapd cannot compress as fast as the hog faults: it reclaims too.
    assert!(vm(&r, "pgsteal_direct") > 0);
    // Without swap the same hog runs out of memory: refused, not hidden.
    let e = run_text(&text("none"), "z.toml", &[], &opts).unwrap_err().to_string();
    assert!(e.contains("OOM"), "{e}");
}

#[test]
fn vm_keys_are_checked() {
    let bad = |extra: &str| {
        let text = format!("[machine]\npreset = \"4cpu\"\n[kernel]\nversion = \"4.1\"\n{extra}");
        run_text(&text, "x.toml", &[], &RunOptions::default()).unwrap_err().to_string()
    };
    assert!(bad("[kernel.vm]\nkswapd_threads = 17\n").contains("1..16"));
    assert!(bad("[kernel.vm]\nwatermark_scale_factor = 10\n").contains("4.6"));
    assert!(bad("[kernel.vm]\nbogus = 1\n").contains("bogus"));
    assert!(bad("[memory]\npage_cache = \"half\"\n").contains("empty, full"));
    assert!(bad("[memory]\nswap = \"disk\"\n").contains("not modelled"));
    let old = "[machine]\npreset = \"4cpu\"\n[kernel]\nversion = \"3.10\"\n[memory]\nswap = \"zswap\"\n";
    assert!(run_text(old, "x.toml", &[], &RunOptions::default()).unwrap_err().to_string().contains("3.11"));
}

/// `writers` dd writers on a 100 MiB/s disk with vm.dirty_bytes 64 MiB
/// (background 32 MiB), on `version`.
fn write_run(writers: usize, version: &str, extra: &str) -> Result<Report, crate::error::SimError> {
    let text = format!(
        r#"
name = "wb"
[machine]
preset = "4cpu"
memory = "2GiB"
[[machine.disk]]
name = "d"
queue_depth = 32
write = "100us"
bandwidth = "100MiB/s"
max_sectors_kb = 1024
{extra}
[kernel]
version = "{version}"
[kernel.vm]
dirty_bytes = 67108864
dirty_background_bytes = 33554432
[measure]
warmup = "3s"
duration = "5s"
[[task]]
name = "dd"
count = {writers}
program = [{{ loop = {{ count = 0, body = [{{ write = {{ disk = "d", size = "1MiB" }} }}] }} }}]
"#
    );
    run_text(&text, "wb.toml", &[], &RunOptions { seed: 1, check: true, ..Default::default() })
}

#[test]
fn writers_are_held_to_the_disk_near_the_setpoint_with_pauses_that_grow_with_them() {
    let mut pauses = Vec::new();
    for n in [1, 4] {
        let r = write_run(n, "4.16", "").expect("runs");
        let wb = r.mm.as_ref().unwrap().writeback.as_ref().expect("a writeback section");
        // The disk's 100 MiB/s, dirtied and written.
        let t = &wb.throttle[0];
        assert!((t.dirtied_kbs - 102_400.0).abs() < 5_000.0, "{n} writers: {t:?}");
        assert!((wb.devices[0].written_kbs - 102_400.0).abs() < 5_000.0, "{:?}", wb.devices[0]);
        // Dirty + writeback between the freerun ceiling (48 MiB) and the
        // limit (64 MiB), near the setpoint (56 MiB).
        let level: Vec<u64> = wb.samples.iter().map(|s| s.dirty_kb + s.writeback_kb).collect();
        let mean = level.iter().sum::<u64>() / level.len() as u64;
        assert!((48 * 1024..64 * 1024).contains(&mean), "{n} writers: {level:?}");
        assert!(t.paused_pct > 80.0, "{t:?}");
        pauses.push(t.pause_p50_ms);
    }
    // wb_min_pause: ~10 ms for one writer, longer for four.
    assert!((4.0..=16.0).contains(&pauses[0]), "{pauses:?}");
    assert!(pauses[1] > 1.5 * pauses[0], "{pauses:?}");
}

#[test]
fn large_folios_dirty_a_write_at_once_from_ext4_6_16() {
    // A 1 MiB write dirties one 256-page folio on 6.16 (ext4) and 5.18
    // (xfs), so a writer calls balance_dirty_pages once per write; before,
    // every nr_dirtied_pause pages (32 at first).
    let per_pause = |v: &str, fs: &str| {
        let r = write_run(1, v, &format!("filesystem = \"{fs}\"")).expect("runs");
        let t = r.mm.unwrap().writeback.unwrap().throttle[0].clone();
        t.dirtied_kbs * 5.0 / t.pauses.max(1) as f64
    };
    assert!(per_pause("6.18", "ext4") >= 1024.0);
    assert!(per_pause("5.18", "xfs") >= 1024.0);
    assert!(per_pause("6.12", "ext4") < 1024.0);
}

#[test]
fn writes_before_3_2_and_both_forms_of_a_limit_are_refused() {
    let e = write_run(1, "3.0", "").unwrap_err().to_string();
    assert!(e.contains("before 3.2") && e.contains("task.program.write"), "{e}");
    let text = r#"
name = "x"
[machine]
preset = "4cpu"
memory = "1GiB"
[kernel.vm]
dirty_ratio = 10
dirty_bytes = 1000000
"#;
    let e = run_text(text, "x.toml", &[], &RunOptions::default()).unwrap_err().to_string();
    assert!(e.contains("kernel.vm.dirty_bytes") && e.contains("clears the other"), "{e}");
}

#[test]
fn reclaimers_crowding_a_small_list_wait_for_too_many_isolated_pages() {
    // 128 anonymous hogs on 4 CPUs and 64 MiB with zswap: dozens of them
    // are in direct reclaim at once, each holding its batch isolated,
    // against an eighth of a ~10,000-page inactive list.
    let stalls = |v: &str| {
        let text = format!(
            r#"
name = "isolated"
[machine]
preset = "4cpu"
memory = "64MiB"
[kernel]
version = "{v}"
[kernel.vm]
kswapd_nice = 19
[memory]
swap = "zswap"
[measure]
warmup = "200ms"
duration = "1s"
[[task]]
name = "hog"
count = 128
program = [{{ loop = {{ count = 0, body = [{{ anon = {{ size = "8MiB" }} }}] }} }}]
"#
        );
        let opts = RunOptions { seed: 1, check: true, ..Default::default() };
        let r = run_text(&text, "isolated.toml", &[], &opts).expect("runs");
        let a = r.mm.as_ref().unwrap().alloc[0].clone();
        assert_eq!(a.group, "hog");
        (a.isolated_stalls, a.slow_p99_us)
    };
    let (old, old_p99) = stalls("4.16");
    let (new, _) = stalls("6.1");
    assert!(old > 0 && new > 0, "4.16: {old} stalls, 6.1: {new}");
    // 4.16 sleeps 26 jiffies (msleep(100) at HZ=250) per stall; 6.1 waits
    // at most HZ/50 and is woken by the next reclaimer that passes the
    // check, so it stalls far more often for as long in all.
    assert!(new > 4 * old, "4.16: {old} stalls, 6.1: {new}");
    assert!(old_p99 >= 104_000.0, "a 4.16 stall is a whole msleep(100): p99 {old_p99} us");
}

/// A reader of its own file of `file_size`, on 1 GiB with a 500 MiB/s
/// disk: `passes` passes of a first file, then a second file for good.
fn reread(file_size: &str, passes: u64, workingset: bool, version: &str) -> Report {
    let reads = passes * crate::units::parse_size(file_size).unwrap() / (1 << 20);
    let read = format!(r#"{{ read = {{ disk = "d", size = "1MiB", file_size = "{file_size}" }} }}"#);
    let text = format!(
        r#"
name = "reread"
[machine]
preset = "4cpu"
memory = "1GiB"
[[machine.disk]]
name = "d"
queues = "per_cpu"
queue_depth = 256
read = "100us"
bandwidth = "500MiB/s"
[kernel]
version = "{version}"
[kernel.vm]
workingset = {workingset}
[measure]
warmup = "0ms"
duration = "12s"
[[task]]
name = "dd"
count = 1
program = [{{ loop = {{ count = {reads}, body = [{read}] }} }}, {{ loop = {{ count = 0, body = [{read}] }} }}]
"#
    );
    run_text(&text, "reread.toml", &[], &RunOptions { seed: 1, check: true, ..Default::default() }).expect("runs")
}

#[test]
fn a_file_read_again_is_found_in_the_page_cache_and_activated() {
    // 512 MiB on 1 GiB, read for good: one pass from the disk, then hits;
    // the second touch of each page activates it.
    let r = reread("512MiB", 1_000_000, true, "4.16");
    assert_eq!(vm(&r, "pgpgin"), 512 << 10, "read from the disk once");
    assert_eq!(vm(&r, "pgactivate"), 512 << 8, "every page activated on its second read");
    let n = &r.mm.as_ref().unwrap().nodes[0];
    assert_eq!(n.active_file_pages, 512 << 8);
}

#[test]
fn a_new_workingset_replaces_the_old_one_only_with_shadow_entries() {
    // 600 MiB read three times (activated), then another 600 MiB for good.
    // The second file's pages are evicted from the short inactive list
    // before their second read; with shadow entries their refault distance
    // (about the inactive list) is within the active list, so they come
    // back active and the old file is deactivated: the new file is read
    // from the disk twice. Without (P3's patch), it never gets in.
    let on = reread("600MiB", 3, true, "4.16");
    let off = reread("600MiB", 3, false, "4.16");
    let file = 600 << 10; // KiB
    assert_eq!(vm(&on, "workingset_activate"), 600 << 8, "{:?}", on.mm.as_ref().unwrap().vmstat);
    assert_eq!(vm(&on, "pgpgin"), 3 * file, "the first file once, the second twice");
    assert!(vm(&on, "pgdeactivate") >= 600 << 8, "the old workingset made way");
    assert_eq!(vm(&off, "workingset_refault"), 0);
    assert!(vm(&off, "pgpgin") > 6 * file, "without shadow entries the new file thrashes");
}

#[test]
fn files_read_again_are_checked() {
    let read = |op: &str, count: usize| {
        let text = format!(
            "[machine]\npreset = \"4cpu\"\n[[machine.disk]]\nname = \"d\"\n[kernel]\nversion = \"4.16\"\n\
             [measure]\nduration = \"100ms\"\n[[task]]\nname = \"r\"\ncount = {count}\nprogram = [{{ read = {op} }}]\n"
        );
        run_text(&text, "x.toml", &[], &RunOptions::default()).unwrap_err().to_string()
    };
    let e = read(r#"{ disk = "d", file_size = "1GiB", direct = true }"#, 1);
    assert!(e.contains("task[0].program[0].read.file_size") && e.contains("O_DIRECT"), "{e}");
    let e = read(r#"{ disk = "d", file_size = "lots" }"#, 1);
    assert!(e.contains("file_size") && e.contains("\"lots\""), "{e}");
    // More tracked pages than the model keeps.
    let e = read(r#"{ disk = "d", file_size = "65GiB" }"#, 1);
    assert!(e.contains("64 GiB") && e.contains("file_size"), "{e}");
}

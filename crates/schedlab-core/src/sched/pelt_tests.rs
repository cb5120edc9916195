//! Unit tests of sched/pelt.rs: the sums against hand-computed values and
//! the kernel's fixed points.
use super::*;

/// One PELT period in ns: 1024 units of 1024 ns.
const PERIOD_NS: u64 = 1024 * 1024;
const MS: u64 = 1_000_000;
const NICE_0: u64 = 1024;

/// Drive a task from `from` to `to` (ns) in steps of at most `step` ns,
/// in a constant state, as the kernel's tick and switch updates would.
fn run_se(sa: &mut SchedAvg, from: u64, to: u64, step: u64, w: u64, on_rq: bool, running: bool) {
    let mut t = from;
    while t < to {
        t = (t + step).min(to);
        update_se(sa, t, w, on_rq, on_rq, running);
    }
}

#[test]
fn yn_inv_table_matches_generator() {
    // Documentation/scheduler/sched-pelt.c: x = ((1UL<<32)-1)*pow(y, i)
    // truncated, y = 0.5^(1/32). Allow 1 ulp for libm differences.
    let y = 0.5f64.powf(1.0 / 32.0);
    for (i, &v) in RUNNABLE_AVG_YN_INV.iter().enumerate() {
        let x = (((1u64 << 32) - 1) as f64 * y.powi(i as i32)) as u64;
        assert!((x as i64 - v as i64).abs() <= 1, "entry {i}: {v:#x} vs {x:#x}");
    }
    assert_eq!(RUNNABLE_AVG_YN_INV[0], 0xffffffff);
    // y^16 = 1/sqrt(2).
    assert_eq!(RUNNABLE_AVG_YN_INV[16], 0xb504f333);
}

#[test]
fn load_avg_max_is_the_integer_fixed_point() {
    // sched-pelt.c calc_converged_max: max = max*y + 1024 from 1024 until
    // it stops changing.
    let mut max = 1024u64;
    loop {
        let next = decay_load(max, 1) + 1024;
        if next == max {
            break;
        }
        max = next;
    }
    assert_eq!(max, LOAD_AVG_MAX as u64);
    // LOAD_AVG_MAX·y == LOAD_AVG_MAX − 1024, the identity the divider uses.
    assert_eq!(decay_load(LOAD_AVG_MAX as u64, 1), PELT_MIN_DIVIDER as u64);
}

#[test]
fn decay_load_half_life_and_cutoff() {
    let half = decay_load(1024, 32);
    assert!((511..=513).contains(&half), "{half}");
    let quarter = decay_load(1024, 64);
    assert!((255..=257).contains(&quarter), "{quarter}");
    // The table's y^0 is 0xffffffff / 2^32: one below val.
    assert_eq!(decay_load(1024, 0), 1023);
    // 63·32 periods: still computed, but the shift by 63 leaves nothing.
    assert_eq!(decay_load(LOAD_AVG_MAX as u64, 63 * 32), 0);
    assert_eq!(decay_load(u64::MAX, 63 * 32), 0);
    // Beyond: the explicit cut.
    assert_eq!(decay_load(u64::MAX, 63 * 32 + 1), 0);
    assert_eq!(decay_load(u64::MAX, u64::MAX), 0);
}

/// Two updates of a fresh, always-running nice-0 task, computed by hand.
///
/// Update 1 at now = 500·1024 ns: delta = 500 units, period_contrib was
/// 0, so no boundary is crossed (p = 0): contrib = 500.
///   load_sum = 1·500 = 500, runnable_sum = util_sum = 500<<10 = 512000,
///   period_contrib = 500; returns false, the averages stay 0.
///
/// Update 2 at now = 2000·1024 ns: delta = 1500, delta + pc = 2000,
/// p = 1, d1 = 1024 − 500 = 524, d3 = 2000 % 1024 = 976.
///   y_inv[1] = 0xfa83b2da = 4202935002.
///   decay(500, 1)    = floor(500·4202935002 / 2^32)    = floor(489.29) = 489
///   c1 = decay(524, 1) = floor(524·4202935002 / 2^32)  = floor(512.77) = 512
///   c2 = 47742 − decay(47742, 1) − 1024 = 47742 − 46718 − 1024 = 0
///        (p − 1 = 0 full periods in between)
///   c3 = 976, contrib = 512 + 0 + 976 = 1488
///   load_sum = 489 + 1488 = 1977
///   decay(512000, 1) = floor(512000·4202935002 / 2^32) = floor(501028.9) = 501028
///   util_sum = runnable_sum = 501028 + 1488·1024 = 2024740
///   divider = 46718 + 976 = 47694
///   load_avg = 1024·1977 / 47694 = 2024448 / 47694 = 42 (42.45)
///   util_avg = runnable_avg = 2024740 / 47694 = 42 (42.45)
/// Cross-check: 2000 units of running out of a 47694 divider is
/// 1024·2000/47694 ≈ 42.9 before decay, so 42 is right.
#[test]
fn hand_computed_two_updates() {
    let mut sa = SchedAvg::default();
    assert!(!update_se(&mut sa, 500 * 1024, NICE_0, true, true, true));
    assert_eq!(sa.load_sum, 500);
    assert_eq!(sa.runnable_sum, 512_000);
    assert_eq!(sa.util_sum, 512_000);
    assert_eq!(sa.period_contrib, 500);
    assert_eq!(sa.last_update_time, 500 * 1024);
    assert_eq!((sa.load_avg, sa.runnable_avg, sa.util_avg), (0, 0, 0));

    assert!(update_se(&mut sa, 2000 * 1024, NICE_0, true, true, true));
    assert_eq!(decay_load(500, 1), 489);
    assert_eq!(decay_load(524, 1), 512);
    assert_eq!(decay_load(512_000, 1), 501_028);
    assert_eq!(sa.load_sum, 1977);
    assert_eq!(sa.util_sum, 2_024_740);
    assert_eq!(sa.runnable_sum, 2_024_740);
    assert_eq!(sa.period_contrib, 976);
    assert_eq!(get_pelt_divider(&sa), 47_694);
    assert_eq!(sa.load_avg, 42);
    assert_eq!(sa.util_avg, 42);
    assert_eq!(sa.runnable_avg, 42);
}

#[test]
fn always_running_converges_to_weight_and_capacity() {
    // Nice 0, updated every 1 ms (HZ=1000 tick) for 400 ms.
    let mut sa = SchedAvg::default();
    run_se(&mut sa, 0, 400 * MS, MS, NICE_0, true, true);
    for v in [sa.load_avg, sa.runnable_avg, sa.util_avg] {
        assert!((1004..=1024).contains(&v), "{sa:?}");
    }

    // Nice 19 (weight 15): load converges to the weight, util to 1024.
    let mut sa = SchedAvg::default();
    run_se(&mut sa, 0, 400 * MS, 4 * MS, 15, true, true);
    assert!((14..=15).contains(&sa.load_avg), "{sa:?}");
    assert!(sa.util_avg >= 1004, "{sa:?}");
}

#[test]
fn sums_never_exceed_load_avg_max() {
    // Irregular steps (deterministic LCG) from 1 ns to ~5 ms, always
    // running, for 2 s: no sum may exceed its maximum, no avg 1024.
    let mut sa = SchedAvg::default();
    let mut t = 0u64;
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut max_load_sum = 0;
    while t < 2_000 * MS {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        t += 1 + (x >> 33) % (5 * MS);
        update_se(&mut sa, t, NICE_0, true, true, true);
        assert!(sa.load_sum <= LOAD_AVG_MAX as u64, "{sa:?}");
        assert!(sa.util_sum as u64 <= (LOAD_AVG_MAX as u64) << 10, "{sa:?}");
        assert!(sa.runnable_sum <= (LOAD_AVG_MAX as u64) << 10, "{sa:?}");
        assert!(sa.load_avg <= 1024 && sa.util_avg <= 1024, "{sa:?}");
        max_load_sum = max_load_sum.max(sa.load_sum);
    }
    // And it gets close: within one period's worth of the bound.
    assert!(max_load_sum > (PELT_MIN_DIVIDER as u64), "{max_load_sum}");
}

#[test]
fn half_duty_cycle_oscillates_around_512() {
    // 5 ms running, 5 ms sleeping, tick every 1 ms. Continuous-time
    // theory: with a = y^(5 ms / 1.048576 ms) = 0.5^(4.768/32) = 0.9019,
    // peak = 1024/(1 + a) = 538, trough = peak·a = 486, mean 512.
    let mut sa = SchedAvg::default();
    let mut t = 0;
    let (mut peaks, mut troughs) = (Vec::new(), Vec::new());
    for cycle in 0..100 {
        run_se(&mut sa, t, t + 5 * MS, MS, NICE_0, true, true);
        t += 5 * MS;
        if cycle >= 50 {
            peaks.push(sa.util_avg);
            assert_eq!(sa.load_avg, sa.util_avg, "runnable == running here");
        }
        run_se(&mut sa, t, t + 5 * MS, MS, NICE_0, false, false);
        t += 5 * MS;
        if cycle >= 50 {
            troughs.push(sa.util_avg);
        }
    }
    // The averages only change when a period boundary is crossed and
    // 5 ms is not a whole number of periods, so the sampled peaks and
    // troughs wander a little with the phase (528..538, 485..495).
    let peak = *peaks.iter().max().unwrap();
    let trough = *troughs.iter().min().unwrap();
    assert!((532..=544).contains(&peak), "peak {peak}");
    assert!((480..=492).contains(&trough), "trough {trough}");
    let mid = (peak + trough) / 2;
    assert!((506..=518).contains(&mid), "mid {mid}");
    // Every sample is within the band, not only the extremes.
    assert!(peaks.iter().chain(&troughs).all(|&u| (480..=544).contains(&u)));
}

#[test]
fn half_life_after_sleep() {
    let mut sa = SchedAvg::default();
    run_se(&mut sa, 0, 500 * MS, MS, NICE_0, true, true);
    let busy = sa.util_avg;
    assert!(busy >= 1004);
    let t0 = sa.last_update_time;
    assert_eq!(t0, 500 * MS / 1024 * 1024);

    // Exactly 32 PELT periods blocked: period_contrib ends where it
    // started, so the divider is unchanged and the sums halve.
    let mut a = sa;
    assert!(update_se(&mut a, t0 + 32 * PERIOD_NS, NICE_0, false, false, false));
    assert_eq!(a.period_contrib, sa.period_contrib);
    assert!(a.util_avg.abs_diff(busy / 2) <= 1, "{} vs {busy}", a.util_avg);
    assert!(a.load_avg.abs_diff(sa.load_avg / 2) <= 1);

    // 32 ms wall time is 30.52 periods: 1024·0.5^(30.52/32) ≈ 529.
    let mut b = sa;
    run_se(&mut b, t0, t0 + 32 * MS, MS, NICE_0, false, false);
    assert!((520..=537).contains(&b.util_avg), "{}", b.util_avg);
}

#[test]
fn sub_microsecond_updates_do_nothing() {
    let mut sa = SchedAvg::default();
    run_se(&mut sa, 0, 10 * MS, MS, NICE_0, true, true);
    let before = sa;
    let t = sa.last_update_time;
    for dt in [0, 1, 512, 1023] {
        assert!(!update_se(&mut sa, t + dt, NICE_0, true, true, true));
        assert_eq!(sa, before);
    }
    // The 1023 ns were not lost: 1 ns more completes one unit, which is
    // counted, and last_update_time moves by exactly 1024 ns.
    update_se(&mut sa, t + 1024, NICE_0, true, true, true);
    assert_eq!(sa.last_update_time, t + 1024);
    assert_eq!(sa.load_sum, before.load_sum + 1);
}

#[test]
fn clock_going_back_only_resets_last_update_time() {
    let mut sa = SchedAvg::default();
    run_se(&mut sa, 0, 10 * MS, MS, NICE_0, true, true);
    let before = sa;
    assert!(!update_se(&mut sa, 5 * MS + 3, NICE_0, true, true, true));
    assert_eq!(sa.last_update_time, 5 * MS + 3);
    assert_eq!(SchedAvg { last_update_time: before.last_update_time, ..sa }, before);
}

#[test]
fn within_a_period_sums_grow_but_averages_wait() {
    let mut sa = SchedAvg::default();
    assert!(!update_se(&mut sa, 100 * 1024, NICE_0, true, true, true));
    assert!(!update_se(&mut sa, 1023 * 1024, NICE_0, true, true, true));
    assert_eq!(sa.load_sum, 1023);
    assert_eq!(sa.period_contrib, 1023);
    assert_eq!(sa.util_avg, 0);
    // The boundary: p = 1, averages recomputed.
    assert!(update_se(&mut sa, 1024 * 1024, NICE_0, true, true, true));
    assert_eq!(sa.period_contrib, 0);
    assert!(sa.util_avg > 0);
}

#[test]
fn zero_load_forces_runnable_and_running_to_zero() {
    let mut sa = SchedAvg::default();
    run_se(&mut sa, 0, 10 * MS, MS, NICE_0, true, true);
    let mut a = sa;
    let mut b = sa;
    // A dequeued entity still pointed to by cfs_rq->curr: load 0 wins.
    update_load_sum(&mut a, 20 * MS, 0, 3, 1);
    update_load_sum(&mut b, 20 * MS, 0, 0, 0);
    assert_eq!(a, b);
    assert!(a.util_sum < sa.util_sum && a.runnable_sum < sa.runnable_sum);
}

/// Two nice-0 CPU hogs sharing one CPU, alternating 3 ms slices. Both are
/// queued all the time: cfs load.weight = 2048, h_nr_running = 2, and one
/// of them is always curr. So the kernel gives the cfs_rq load_avg → 2048,
/// runnable_avg → 2·1024, util_avg → 1024; each task load_avg and
/// runnable_avg → 1024 (always runnable) and util_avg ≈ 512 (runs half
/// the time, oscillating with the slice).
#[test]
fn cfs_rq_two_hogs_time_sharing() {
    let mut cfs = SchedAvg::default();
    let mut se = [SchedAvg::default(); 2];
    for s in se.iter_mut() {
        init_entity(s, NICE_0);
        attach_entity(&mut cfs, s, NICE_0);
    }
    assert_eq!(cfs.load_avg, 2048);

    let mut t = 0;
    let mut curr = 0;
    for _ in 0..200 {
        // 3 ms slice, ticked every 1 ms.
        for _ in 0..3 {
            t += MS;
            for (i, s) in se.iter_mut().enumerate() {
                update_se(s, t, NICE_0, true, true, i == curr);
            }
            update_cfs_rq(&mut cfs, t, 2048, 2, true);
        }
        curr = 1 - curr;
    }
    // The cfs_rq may read a hair above 2048: it accumulates 2048·contrib
    // in one sum, which loses relatively less to the truncation in
    // decay_load than each task's 1·contrib sum (LOAD_AVG_MAX is the
    // fixed point *with* truncation by 1 per period).
    assert!((2008..=2050).contains(&cfs.load_avg), "{cfs:?}");
    assert!((2008..=2050).contains(&cfs.runnable_avg), "{cfs:?}");
    assert!((1004..=1024).contains(&cfs.util_avg), "{cfs:?}");
    for s in &se {
        assert!((1004..=1024).contains(&s.load_avg), "{s:?}");
        assert!((1004..=1024).contains(&s.runnable_avg), "{s:?}");
        assert!((480..=545).contains(&s.util_avg), "{s:?}");
    }
    // The cfs_rq tracks the sum of its entities.
    let sum_load = se[0].load_avg + se[1].load_avg;
    let sum_util = se[0].util_avg + se[1].util_avg;
    assert!(cfs.load_avg.abs_diff(sum_load) <= 4, "{} vs {sum_load}", cfs.load_avg);
    assert!(cfs.util_avg.abs_diff(sum_util) <= 4, "{} vs {sum_util}", cfs.util_avg);
}

/// Two nice-0 tasks that each run 5 ms then sleep 5 ms, out of phase, so
/// exactly one is queued (and running) at any time: cfs load.weight =
/// 1024 = 2048·0.5, h_nr_running = 1, curr always set. The kernel gives
/// the cfs_rq load_avg → 1024 (2048 × 50% runnable), runnable_avg → 1024,
/// util_avg → 1024 (the CPU never idles); each task load_avg ≈ util_avg
/// ≈ 512, oscillating between ~486 and ~538 (see the duty-cycle test).
#[test]
fn cfs_rq_two_alternating_sleepers() {
    let mut cfs = SchedAvg::default();
    let mut se = [SchedAvg::default(); 2];
    for s in se.iter_mut() {
        init_entity(s, NICE_0);
        attach_entity(&mut cfs, s, NICE_0);
    }

    let mut t = 0;
    let mut curr = 0;
    for _ in 0..100 {
        for _ in 0..5 {
            t += MS;
            for (i, s) in se.iter_mut().enumerate() {
                update_se(s, t, NICE_0, i == curr, i == curr, i == curr);
            }
            update_cfs_rq(&mut cfs, t, 1024, 1, true);
        }
        curr = 1 - curr;
    }
    // load_avg can read a little above 1024 while the two full-load
    // histories given at attach (init_entity) are still decaying.
    assert!((1004..=1030).contains(&cfs.load_avg), "{cfs:?}");
    assert!((1004..=1024).contains(&cfs.runnable_avg), "{cfs:?}");
    assert!((1004..=1024).contains(&cfs.util_avg), "{cfs:?}");
    for s in &se {
        assert!((480..=544).contains(&s.load_avg), "{s:?}");
        assert!((480..=544).contains(&s.util_avg), "{s:?}");
    }
    let sum_load = se[0].load_avg + se[1].load_avg;
    assert!(cfs.load_avg.abs_diff(sum_load) <= 4, "{} vs {sum_load}", cfs.load_avg);
}

#[test]
fn attach_then_detach_restores_the_cfs_rq() {
    // A cfs_rq with history: 30 ms of one nice-0 task running, then
    // 7.3 ms idle, so period_contrib is mid-period.
    let mut cfs = SchedAvg::default();
    let mut t = 0;
    while t < 30 * MS {
        t += MS;
        update_cfs_rq(&mut cfs, t, 1024, 1, true);
    }
    update_cfs_rq(&mut cfs, 37 * MS + 300_000, 0, 0, false);
    let before = cfs;

    // A task with history on another CPU's clock (different window).
    let mut se = SchedAvg::default();
    run_se(&mut se, 0, 50 * MS + 777, MS, 335, true, true);
    run_se(&mut se, 50 * MS + 777, 61 * MS, MS, 335, false, false);
    let (load_avg, util_avg, runnable_avg) = (se.load_avg, se.util_avg, se.runnable_avg);

    attach_entity(&mut cfs, &mut se, 335);
    let divider = get_pelt_divider(&cfs) as u64;
    assert_eq!(se.last_update_time, cfs.last_update_time);
    assert_eq!(se.period_contrib, cfs.period_contrib);
    assert_eq!((se.load_avg, se.util_avg, se.runnable_avg), (load_avg, util_avg, runnable_avg));
    assert_eq!(se.util_sum as u64, util_avg * divider);
    assert_eq!(se.runnable_sum, runnable_avg * divider);
    assert_eq!(se.load_sum, load_avg * divider / 335);
    assert_eq!(cfs.load_avg, before.load_avg + load_avg);
    assert_eq!(cfs.load_sum, before.load_sum + 335 * se.load_sum);
    assert_eq!(cfs.util_avg, before.util_avg + util_avg);
    assert_eq!(cfs.runnable_avg, before.runnable_avg + runnable_avg);

    detach_entity(&mut cfs, &se, 335);
    assert_eq!(cfs, before);
}

#[test]
fn detach_saturates_at_zero() {
    let mut cfs = SchedAvg {
        load_avg: 10,
        load_sum: 10 * 47_000,
        util_avg: 5,
        util_sum: 5 * 47_000,
        runnable_avg: 5,
        runnable_sum: 5 * 47_000,
        ..SchedAvg::default()
    };
    let mut se = SchedAvg::default();
    init_entity(&mut se, NICE_0);
    se.util_avg = 700;
    se.runnable_avg = 700;
    let mut scratch = SchedAvg::default();
    attach_entity(&mut scratch, &mut se, NICE_0);
    detach_entity(&mut cfs, &se, NICE_0);
    assert_eq!((cfs.load_avg, cfs.load_sum), (0, 0));
    assert_eq!((cfs.util_avg, cfs.util_sum), (0, 0));
    assert_eq!((cfs.runnable_avg, cfs.runnable_sum), (0, 0));
}

#[test]
fn detach_keeps_sums_at_least_avg_times_min_divider() {
    // Rounding left the cfs_rq with more avg than its sum backs: after
    // removing the se, the sum is floored to avg·PELT_MIN_DIVIDER.
    let mut cfs = SchedAvg { util_avg: 300, util_sum: 300 * PELT_MIN_DIVIDER, ..SchedAvg::default() };
    let se = SchedAvg { util_avg: 100, util_sum: 250 * PELT_MIN_DIVIDER, ..SchedAvg::default() };
    detach_entity(&mut cfs, &se, NICE_0);
    assert_eq!(cfs.util_avg, 200);
    assert_eq!(cfs.util_sum, 200 * PELT_MIN_DIVIDER);
}

#[test]
fn new_task_starts_fully_loaded() {
    // Whatever was there before is wiped.
    let mut se = SchedAvg { util_sum: 99, ..SchedAvg::default() };
    init_entity(&mut se, NICE_0);
    assert_eq!(se, SchedAvg { load_avg: 1024, ..SchedAvg::default() });

    // Attached to an empty cfs_rq at t = 0: divider = PELT_MIN_DIVIDER,
    // load_sum rebuilt as 1024·46718/1024 = 46718: a full history.
    let mut cfs = SchedAvg::default();
    attach_entity(&mut cfs, &mut se, NICE_0);
    assert_eq!(se.load_sum, PELT_MIN_DIVIDER as u64);
    assert_eq!(cfs.load_avg, 1024);
    assert_eq!(cfs.load_sum, 1024 * PELT_MIN_DIVIDER as u64);

    // Kept running, it stays at full load.
    run_se(&mut se, 0, 50 * MS, MS, NICE_0, true, true);
    assert!(se.load_avg >= 1004, "{se:?}");

    // 6.x corner case: load_avg·divider ≤ weight gives load_sum = 1.
    let mut tiny = SchedAvg { load_avg: 0, ..SchedAvg::default() };
    attach_entity(&mut SchedAvg::default(), &mut tiny, NICE_0);
    assert_eq!(tiny.load_sum, 1);
}

#[test]
fn post_init_util_halves_the_spare_capacity() {
    // The kernel comment's series on an idle 1024-capacity CPU: task
    // util 512, 256, 128 as cfs util goes 0, 512, 768.
    let mut cfs = SchedAvg::default();
    let mut expect = vec![];
    for _ in 0..3 {
        let mut se = SchedAvg::default();
        init_entity(&mut se, NICE_0);
        // 6.1/6.6 use the high-resolution weight, 6.10+ se_weight: the
        // cap decides both here.
        let mut se_new = se;
        post_init_entity_util_avg(&cfs, &mut se, NICE_0 << 10, SCHED_CAPACITY_SCALE);
        post_init_entity_util_avg(&cfs, &mut se_new, NICE_0, SCHED_CAPACITY_SCALE);
        assert_eq!(se.util_avg, se_new.util_avg);
        assert_eq!(se.runnable_avg, se.util_avg);
        expect.push(se.util_avg);
        attach_entity(&mut cfs, &mut se, NICE_0);
    }
    assert_eq!(expect, vec![512, 256, 128]);

    // Below the cap the extrapolation shows: util 100 over load 2047
    // gives 100·1024/2048 = 50 with se_weight; 1024× that (capped at
    // (1024 − 100)/2 = 462) with the high-resolution weight.
    let cfs = SchedAvg { util_avg: 100, load_avg: 2047, ..SchedAvg::default() };
    let mut a = SchedAvg::default();
    post_init_entity_util_avg(&cfs, &mut a, NICE_0, SCHED_CAPACITY_SCALE);
    assert_eq!(a.util_avg, 50);
    let mut b = SchedAvg::default();
    post_init_entity_util_avg(&cfs, &mut b, NICE_0 << 10, SCHED_CAPACITY_SCALE);
    assert_eq!(b.util_avg, 462);

    // No spare capacity: util_avg untouched.
    let full = SchedAvg { util_avg: 1023, load_avg: 1024, ..SchedAvg::default() };
    let mut c = SchedAvg::default();
    post_init_entity_util_avg(&full, &mut c, NICE_0, SCHED_CAPACITY_SCALE);
    assert_eq!(c.util_avg, 0);
}

#[test]
fn a_runnable_task_joining_a_group_loads_its_entity_fully_at_once() {
    // A group entity of weight 683 whose group was empty for a while:
    // its load_sum decayed to a fifth of the divider.
    let divider = PELT_MIN_DIVIDER as u64;
    let mut se = SchedAvg { load_sum: divider / 5, ..SchedAvg::default() };
    se.load_avg = 683 * se.load_sum / divider;
    let mut parent = SchedAvg { load_avg: 1024 + se.load_avg, ..SchedAvg::default() };
    parent.load_sum = parent.load_avg * divider;
    let gcfs = SchedAvg { load_sum: 1024 * divider, load_avg: 1024, ..SchedAvg::default() };
    // A hog that was runnable all along joins: runnable_sum = its load_sum.
    update_tg_cfs_load(&mut parent, &mut se, &gcfs, 1024, divider as i64, 683);
    assert_eq!(se.load_sum, divider, "clipped at the divider");
    assert_eq!(se.load_avg, 683);
    assert_eq!(parent.load_avg, 1024 + 683);

    // It leaves again with two like it still queued: each task is taken
    // as equally runnable, so the entity stays fully loaded.
    let gcfs2 = SchedAvg { load_sum: 2048 * divider, load_avg: 2048, ..SchedAvg::default() };
    update_tg_cfs_load(&mut parent, &mut se, &gcfs2, 2048, -(divider as i64), 683);
    assert_eq!(se.load_avg, 683);
    // The last one leaves: an empty group's entity has no load.
    let empty = SchedAvg::default();
    update_tg_cfs_load(&mut parent, &mut se, &empty, 0, -(divider as i64), 683);
    assert_eq!((se.load_sum, se.load_avg), (0, 0));
    assert_eq!(parent.load_avg, 1024);
}

//! `cargo run --release --example run -- SCENARIO [key=value ...]`: run a
//! scenario without Python and print the groups and the run's cost.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = &args[1];
    let text = std::fs::read_to_string(path).expect("read scenario");
    // KEY=VALUE as `schedlab run --set` takes it.
    let ov: Vec<(String, String)> = args[2..]
        .iter()
        .map(|a| schedlab_core::scenario::overrides::parse_set(a).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    let t0 = std::time::Instant::now();
    let opts = schedlab_core::RunOptions {
        seed: std::env::var("SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(1),
        check: std::env::var("CHECK").is_ok(),
        trace_path: std::env::var("TRACE").ok(),
        perfetto_path: std::env::var("PERFETTO").ok(),
        strict: std::env::var("STRICT").is_ok(),
        heap_budget: None,
        progress: None,
    };
    match schedlab_core::run_text(&text, path, &ov, &opts) {
        Ok(r) => {
            let dt = t0.elapsed().as_secs_f64();
            if let Ok(p) = std::env::var("JSON") {
                std::fs::write(p, r.to_json()).unwrap();
            }
            for g in &r.groups {
                println!("{} count={} elapsed_s={:?}", g.name, g.count, g.elapsed_s);
            }
            let sim = r.sim.as_ref().expect("a simulation report");
            println!("avg: {:?}", r.mpstat.average[0]);
            let ev = sim.events;
            println!("events={} wall={:.3}s => {:.2} Mev/s, end={}", ev, dt, ev as f64 / dt / 1e6, sim.end_ns);
        }
        Err(e) => eprintln!("error [{}]: {}", e.code(), e),
    }
}

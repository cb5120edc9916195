//! What of a validated scenario can run on a real kernel: refusals name the
//! key path as the core's errors do (`task[0].program[1].parallel`).

use schedlab_core::scenario::Scenario;
use schedlab_core::workload::Op;

/// The key path of every op of a compiled program (loops are flattened into
/// LoopStart/LoopEnd; LoopEnd gets its loop's path).
pub fn op_paths(group: usize, ops: &[Op]) -> Vec<String> {
    let mut out = Vec::with_capacity(ops.len());
    // (prefix, next index)
    let mut stack: Vec<(String, usize)> = vec![(format!("task[{group}].program"), 0)];
    for op in ops {
        match op {
            Op::LoopEnd { .. } => {
                stack.pop();
                let (prefix, idx) = stack.last_mut().expect("loop end has a parent");
                out.push(format!("{prefix}[{}].loop", *idx));
                *idx += 1;
            }
            _ => {
                let (prefix, idx) = stack.last_mut().expect("program level");
                let path = format!("{prefix}[{}]", *idx);
                if let Op::Sys(_) = op {
                    // A cost the compiler put before the op it belongs to.
                    out.push(path);
                } else if let Op::LoopStart { .. } = op {
                    out.push(format!("{path}.loop"));
                    stack.push((format!("{path}.loop.body"), 0));
                } else {
                    *idx += 1;
                    out.push(format!("{path}.{}", op_name(op)));
                }
            }
        }
    }
    out
}

pub const REAL_OPS: &str = "run, runtime, sleep, timer, yield, loop, barrier, wait, signal, fork, exit";

pub fn op_name(op: &Op) -> &'static str {
    match op {
        Op::Run(_) => "run",
        Op::Sys(_) => "sys",
        Op::Runtime(_) => "runtime",
        Op::Sleep(_) => "sleep",
        Op::Timer { .. } => "timer",
        Op::Yield => "yield",
        Op::LoopStart { .. } | Op::LoopEnd { .. } => "loop",
        Op::Barrier(_) => "barrier",
        Op::Wait(_) => "wait",
        Op::Signal(_) => "signal",
        Op::Send { .. } => "send",
        Op::Recv { .. } => "recv",
        Op::Fork(_) => "fork",
        Op::Exit => "exit",
        Op::Exec => "exec",
        Op::Park => "park",
        Op::Parallel { .. } | Op::KtaskHelper(_) => "parallel",
        Op::QueueWork { .. } => "queue_work",
        Op::Io { .. } => "io",
        Op::Read { .. } => "read",
        Op::Kswapd(_) => "kswapd",
        Op::Flusher(_) => "flusher",
        Op::Dbench(_) => "dbench",
        Op::Rtmt(_) | Op::RtmtRotate => "rt_migrate_test",
        Op::Clone { .. } | Op::SetAttr(_) | Op::StartGate(_) => "start",
    }
}

/// Refuse what has no real counterpart. `host_cpus` are the CPUs this process may use.
/// A refusal: the stable code and the message (file: key: what; accepted).
#[derive(Debug)]
pub struct Refusal {
    pub code: &'static str,
    pub message: String,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{}] {}", self.code, self.message)
    }
}

pub fn check(sc: &Scenario, host_cpus: usize) -> Result<(), Refusal> {
    let file = &sc.source;
    let nr = sc.machine.nr_cpus();
    if nr > host_cpus {
        return Err(Refusal {
            code: "SL110",
            message: format!(
                "{file}: machine: machine \"{}\" has {nr} CPUs but this host lets the runner use only {host_cpus} \
                 online CPU(s), and a real kernel cannot be given more; accepted: a machine of at most {host_cpus} \
                 CPUs (or simulate it: schedlab run)",
                sc.machine.name
            ),
        });
    }
    if sc.rt_migrate_test.is_some() {
        return Err(Refusal {
            code: "SL120",
            message: format!(
                "{file}: rt_migrate_test: the runner does not imitate rt-migrate-test; on a real kernel run the \
                 tool itself (rt-tests' rt-migrate-test, e.g. `rt-migrate-test -c 5`) and compare its output with \
                 `schedlab run SCENARIO --rt-migrate-test`; accepted: a scenario without [rt_migrate_test]"
            ),
        });
    }
    for (gi, g) in sc.groups.iter().enumerate() {
        if g.kthread && g.count > 0 {
            return Err(Refusal {
                code: "SL120",
                message: format!(
                    "{file}: task[{gi}].kthread: no real counterpart: the real-kernel runner cannot create kernel \
                     threads; its tasks are threads of one user process; accepted: kthread = false"
                ),
            });
        }
        for (op, path) in g.program.ops.iter().zip(op_paths(gi, &g.program.ops)) {
            let what = match op {
                Op::Parallel { .. } => "an in-kernel ktask job on an unbound workqueue",
                Op::QueueWork { .. } => "a work item for the kernel's workqueues",
                Op::Io { .. } => "a block request with the model's completion path",
                Op::Exec => "execve() of a new program, where the runner's tasks are threads of one process",
                Op::Read { idx } if !sc.read_ops[*idx as usize].write => {
                    "a read or an anonymous fault through the model's page cache (only write ops run for real)"
                }
                _ => continue,
            };
            return Err(Refusal {
                code: "SL120",
                message: format!(
                    "{file}: {path}: op \"{}\" ({what}) has no real counterpart in the real-kernel runner; \
                     accepted ops there: {REAL_OPS}",
                    op_name(op)
                ),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_loops() {
        let text = r#"
name = "p"
[machine]
sockets = 1
cores_per_socket = 2
threads_per_core = 1
[[task]]
name = "a"
program = [{ run = "1ms" }, { loop = { count = 2, body = [{ sleep = "1ms" }, { parallel = { work = "1ms" } }] } }, { exit = true }]
"#;
        let sc = schedlab_core::scenario::load(text, "p.toml", &[]).expect("valid");
        let paths = op_paths(0, &sc.groups[0].program.ops);
        assert_eq!(
            paths,
            vec![
                "task[0].program[0].run",
                "task[0].program[1].loop",
                "task[0].program[1].loop.body[0].sleep",
                "task[0].program[1].loop.body[1].parallel",
                "task[0].program[1].loop",
                "task[0].program[2]", // kernel.costs.exit, before its op
                "task[0].program[2].exit",
            ]
        );
        let e = check(&sc, 2).unwrap_err();
        assert_eq!(e.code, "SL120");
        assert!(e.to_string().contains("task[0].program[1].loop.body[1].parallel"), "{e}");
        let e = check(&sc, 1).unwrap_err();
        assert_eq!(e.code, "SL110");
    }

    #[test]
    fn exec_is_refused_with_its_path() {
        let text = r#"
name = "x"
[machine]
sockets = 1
cores_per_socket = 2
[[task]]
name = "sh"
program = [{ fork = "p" }, { sleep = "1ms" }]
[[task]]
name = "p"
count = 0
program = [{ exec = true }, { run = "1ms" }, { exit = true }]
"#;
        let sc = schedlab_core::scenario::load(text, "x.toml", &[]).expect("valid");
        let e = check(&sc, 2).unwrap_err();
        assert_eq!(e.code, "SL120");
        assert!(e.to_string().contains("task[1].program[0].exec: op \"exec\""), "{e}");
    }

    #[test]
    fn a_read_is_refused_and_a_write_is_not() {
        let text = |op: &str| {
            format!(
                r#"
name = "w"
[machine]
sockets = 1
cores_per_socket = 2
memory = "1GiB"
[[machine.disk]]
name = "d"
[[task]]
name = "dd"
program = [{{ loop = {{ count = 0, body = [{{ {op} = {{ disk = "d", size = "1MiB" }} }}] }} }}]
"#
            )
        };
        let sc = schedlab_core::scenario::load(&text("read"), "w.toml", &[]).expect("valid");
        let e = check(&sc, 2).unwrap_err();
        assert_eq!(e.code, "SL120");
        assert!(e.to_string().contains("task[0].program[0].loop.body[0].read: op \"read\""), "{e}");
        let sc = schedlab_core::scenario::load(&text("write"), "w.toml", &[]).expect("valid");
        check(&sc, 2).expect("a write runs for real");
    }
}

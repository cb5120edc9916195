//! Sessions and autogroups on the real kernel (kernel/sched/autogroup.c).
//!
//! The kernel gives a root-cgroup task its session's autogroup when the
//! task is forked or moved (autogroup_task_group() at sched_cgroup_fork()
//! and sched_move_task()), if `kernel.sched_autogroup_enabled` is 1 at
//! that moment; the autogroup lives in the signal_struct, so all threads of
//! a process share one. The runner's tasks are threads of one process, so
//! it can give them two placements: the root task group (threads created
//! while the sysctl is 0) and one session's autogroup (the runner calls
//! setsid(), which makes a fresh autogroup, and creates that session's
//! threads while the sysctl is 1). The sysctl is put back when the run ends.
//!
//! Without a `[[session]]` the runner's root tasks still need the sysctl at
//! 0: started from a login shell on a machine with autogroup (this
//! project's host, `/proc/self/autogroup` "/autogroup-186"), they would
//! otherwise run in the shell's autogroup, a group entity of their own,
//! where the scenario (and the simulation) has them at the root.

use std::fs;

use schedlab_core::scenario::Scenario;
use schedlab_core::workload::Op;

use crate::plan::{op_paths, Refusal};

const SYSCTL: &str = "/proc/sys/kernel/sched_autogroup_enabled";

/// The task group of the scenario's one autogroup, if it has one; refuses
/// what the runner cannot place: two sessions with root-cgroup tasks, and a
/// fork op that would put a root task in the session's autogroup.
pub fn session_tg(sc: &Scenario) -> Result<Option<usize>, Refusal> {
    let file = &sc.source;
    let autogroups: Vec<_> = sc.cgroups.iter().filter(|c| c.autogroup.is_some()).collect();
    if autogroups.len() > 1 {
        let names: Vec<&str> = autogroups.iter().filter_map(|c| c.autogroup.as_deref()).collect();
        return Err(Refusal {
            code: "SL120",
            message: format!(
                "{file}: session: the root-cgroup tasks of {} sessions ({}) each need an autogroup, and the \
                 real-kernel runner's tasks are threads of one process, which is in one session; accepted: the \
                 root-cgroup tasks of at most one [[session]] (put the others in a [[cgroup]] of the same weight)",
                names.len(),
                names.join(", ")
            ),
        });
    }
    let Some(tg) = autogroups.first().map(|c| c.tg) else { return Ok(None) };
    for (gi, g) in sc.groups.iter().enumerate() {
        for (op, path) in g.program.ops.iter().zip(op_paths(gi, &g.program.ops)) {
            if let Op::Fork(child) = op {
                if sc.groups[*child].cgroup == 0 {
                    return Err(Refusal {
                        code: "SL120",
                        message: format!(
                            "{file}: {path}: forks task {:?}, a root task, in a run with a session's autogroup: \
                             the runner's threads forked during the run inherit the session's autogroup; \
                             accepted: forks of tasks in the session or in a [[cgroup]]",
                            sc.groups[*child].name
                        ),
                    });
                }
            }
        }
    }
    Ok(Some(tg))
}

/// The sysctl as the run found it, put back on drop.
pub struct Autogroup {
    /// flock()ed for the run: runners on one kernel take the sysctl in
    /// turn, so one cannot save the 0 another wrote and put it back last
    /// (two runners at once under pytest -n 2 left it at 0 that way).
    _lock: Option<fs::File>,
    saved: Option<String>,
    /// What the runner last wrote (None: it leaves the sysctl alone).
    now: Option<bool>,
}

impl Autogroup {
    /// Take over the sysctl for the run; with a session (its autogroup's
    /// nice), start it (setsid) and set the nice. Without one the sysctl is
    /// touched only if it matters: it is 1 and the runner is in an
    /// autogroup (/proc/self/autogroup names one; init's prints nothing).
    /// Unable to set it then (not root), the run goes on with its root
    /// tasks in that autogroup, and says so on stderr. A kernel without
    /// autogroup has no sysctl: nothing to do, unless there is a session.
    pub fn start(session_nice: Option<i64>) -> Result<Autogroup, String> {
        let lock = Self::lock();
        // A runner killed mid-run left its note of the value it found: that
        // value, not the 0 it wrote, is the one to put back.
        let saved = fs::read_to_string(SYSCTL).ok().map(|s| s.trim().to_string()).map(|now| {
            let note = fs::read_to_string(Self::note()).unwrap_or_default();
            if note.trim() == "0" || note.trim() == "1" {
                note.trim().to_string()
            } else {
                now
            }
        });
        let mut me = Autogroup { _lock: lock, saved, now: None };
        let Some(nice) = session_nice else {
            let mine = fs::read_to_string("/proc/self/autogroup").unwrap_or_default();
            if me.saved.as_deref() == Some("1") && !mine.trim().is_empty() {
                if let Err(e) = me.write(false) {
                    eprintln!(
                        "schedlab-runner: warning: the root tasks run in this process's autogroup ({}), not at \
                         the root as the scenario has them: {e}",
                        mine.trim()
                    );
                }
            }
            return Ok(me);
        };
        if me.saved.is_none() {
            return Err(format!(
                "{SYSCTL}: not found: this kernel has no autogroup (CONFIG_SCHED_AUTOGROUP), so a session's tasks \
                 cannot have one"
            ));
        }
        // SAFETY: setsid() takes no arguments and touches only this process.
        if unsafe { libc::setsid() } < 0 {
            return Err(format!(
                "setsid(): {} (the runner must not be a process group leader to start a session)",
                std::io::Error::last_os_error()
            ));
        }
        if nice != 0 {
            fs::write("/proc/self/autogroup", nice.to_string())
                .map_err(|e| format!("/proc/self/autogroup = {nice}: {e}"))?;
        }
        me.write(false)?;
        Ok(me)
    }

    /// Threads created from now on go to the session's autogroup (true)
    /// or the root task group (false).
    /// A no-op when start() left the sysctl alone.
    pub fn set(&mut self, on: bool) -> Result<(), String> {
        if self.now.is_none() || self.now == Some(on) {
            return Ok(());
        }
        self.write(on)
    }

    /// An exclusive flock on /run/lock/schedlab-autogroup (else the temp
    /// dir's), held until drop; None if neither can be opened.
    fn lock() -> Option<fs::File> {
        let name = "schedlab-autogroup.lock";
        let f = [std::path::PathBuf::from("/run/lock"), std::env::temp_dir()]
            .iter()
            .find_map(|d| fs::OpenOptions::new().create(true).append(true).open(d.join(name)).ok())?;
        use std::os::fd::AsRawFd;
        // SAFETY: a valid open descriptor, owned by `f` for the call.
        (unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } == 0).then_some(f)
    }

    /// Where a run notes the value it found while it holds the sysctl.
    fn note() -> std::path::PathBuf {
        let run = std::path::Path::new("/run/lock");
        if run.is_dir() { run.to_path_buf() } else { std::env::temp_dir() }.join("schedlab-autogroup.saved")
    }

    fn write(&mut self, on: bool) -> Result<(), String> {
        if self.now.is_none() {
            if let Some(v) = &self.saved {
                let _ = fs::write(Self::note(), v);
            }
        }
        let v = if on { "1" } else { "0" };
        fs::write(SYSCTL, v).map_err(|e| format!("{SYSCTL} = {v}: {e} (setting it needs root)"))?;
        self.now = Some(on);
        Ok(())
    }
}

impl Drop for Autogroup {
    fn drop(&mut self) {
        if let (Some(v), Some(_)) = (&self.saved, self.now) {
            if fs::write(SYSCTL, v).is_ok() {
                let _ = fs::remove_file(Self::note());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::session_tg;

    fn scenario(extra: &str) -> schedlab_core::scenario::Scenario {
        let text = format!(
            "name = \"s\"\n[machine]\nsockets = 1\ncores_per_socket = 2\n[kernel]\nversion = \"6.12\"\n\
             [[session]]\nname = \"a\"\n[[session]]\nname = \"b\"\n{extra}"
        );
        schedlab_core::scenario::load(&text, "s.toml", &[]).expect("valid")
    }

    #[test]
    fn one_session_runs_two_are_refused() {
        let one = scenario(
            "[[task]]\nname = \"x\"\nsession = \"a\"\nprogram = [{ run = \"1ms\" }]\n\
             [[task]]\nname = \"r\"\nprogram = [{ run = \"1ms\" }]\n",
        );
        assert_eq!(
            session_tg(&one).expect("one session").map(|tg| one.cgroups[tg - 1].path.clone()),
            Some("/autogroup-a".into())
        );
        let two = scenario(
            "[[task]]\nname = \"x\"\nsession = \"a\"\nprogram = [{ run = \"1ms\" }]\n\
             [[task]]\nname = \"y\"\nsession = \"b\"\nprogram = [{ run = \"1ms\" }]\n",
        );
        let e = session_tg(&two).expect_err("two sessions").to_string();
        assert!(e.starts_with("[SL120] s.toml: session: the root-cgroup tasks of 2 sessions (a, b)"), "{e}");
        let none = scenario("[[task]]\nname = \"r\"\nprogram = [{ run = \"1ms\" }]\n");
        assert_eq!(session_tg(&none).expect("no session"), None);
    }

    #[test]
    fn a_root_task_forked_beside_a_session_is_refused() {
        let sc = scenario(
            "[[task]]\nname = \"x\"\nsession = \"a\"\nprogram = [{ fork = \"c\" }, { run = \"1ms\" }]\n\
             [[task]]\nname = \"c\"\ncount = 0\nprogram = [{ run = \"1ms\" }, { exit = true }]\n",
        );
        let e = session_tg(&sc).expect_err("root fork").to_string();
        assert!(e.contains("task[0].program[0].fork: forks task \"c\", a root task"), "{e}");
    }
}

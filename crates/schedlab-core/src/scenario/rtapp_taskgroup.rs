//! rt-app's `taskgroup` (upstream rt-app since 2019; Debian's 1.0 has none):
//! the cpu cgroup a thread runs in, a path below the cpu controller's root
//! ("/tg1/tg11"), which rt-app creates if it does not exist (and leaves
//! after). Allowed on SCHED_OTHER, BATCH and IDLE threads only (rt-app
//! aborts otherwise; docs/FORMATS.md); "" is no task group. Each
//! becomes the `[[task]]`'s `cgroup`, and a `[[cgroup]]` of the kernel's
//! defaults unless the scenario lists it already (with its cpu.weight,
//! cpu.max, ...: rt-app sets none of them).

use toml::Value;

use super::json::{JStr, Json};
use crate::error::{Result, SimError};

const ACCEPTED: &str = "a cgroup path from the cpu controller's root, as \"/tg1/tg11\", or \"\" (none)";

/// One `taskgroup` value: Some(path), or None for "" and "/" (the root).
fn path_of(file: &str, key: &str, v: &Json) -> Result<Option<String>> {
    let Some(text) = v.as_str() else { return Err(SimError::bad_value(file, key, v.show(), ACCEPTED)) };
    let trimmed = text.trim_end_matches('/');
    if trimmed.is_empty() {
        return Ok(None);
    }
    let parts: Vec<&str> = trimmed.split('/').collect();
    if !trimmed.starts_with('/') || parts[1..].iter().any(|p| p.is_empty() || *p == "." || *p == "..") {
        return Err(SimError::bad_value(file, key, v.show(), ACCEPTED));
    }
    Ok(Some(trimmed.to_string()))
}

/// The thread's task group: the task's `taskgroup`, or its phases' (a
/// phase without one keeps the group it is in). A thread that moves
/// between groups from one phase to the next is refused (a task's cgroup
/// is fixed in the model), and so is a taskgroup on a thread of the RT or
/// deadline class (rt-app aborts).
pub(super) fn taskgroup_of(file: &str, path: &str, task: &Json, fair: bool) -> Result<Option<String>> {
    let phases: &[(JStr, Json)] = match task.get("phases") {
        Some(Json::Object(p)) => p,
        _ => &[],
    };
    let mut current = match task.get("taskgroup") {
        Some(v) => Some(path_of(file, &format!("{path}.taskgroup"), v)?),
        None => None,
    };
    let mut first: Option<(Option<String>, String)> = None;
    for (name, ph) in phases {
        let key = format!("{path}.phases.{}.taskgroup", name.segment());
        if let Some(v) = ph.get("taskgroup") {
            current = Some(path_of(file, &key, v)?);
        }
        let now = current.clone().flatten();
        match &first {
            None => first = Some((now, key)),
            Some((was, _)) if *was != now => {
                return Err(SimError::not_modelled(
                    file,
                    &key,
                    format!(
                        "a phase that moves the thread from task group {} to {}: a task's cgroup is fixed in \
                         schedlab; accepted: one taskgroup for the whole thread",
                        was.as_deref().unwrap_or("/"),
                        now.as_deref().unwrap_or("/")
                    ),
                ))
            }
            Some(_) => {}
        }
    }
    let group = match first {
        Some((g, _)) => g,
        None => current.flatten(),
    };
    if group.is_some() && !fair {
        return Err(SimError::bad_value(
            file,
            &format!("{path}.taskgroup"),
            format!("{} on an RT or deadline thread (rt-app aborts)", group.as_deref().unwrap_or_default()),
            "a taskgroup on SCHED_OTHER, SCHED_BATCH or SCHED_IDLE threads only",
        ));
    }
    Ok(group)
}

/// A `[[cgroup]]` of the kernel's defaults for each task group the
/// `[[task]]`s name that `root` does not list, parents first, after the
/// scenario's own.
pub(super) fn add_cgroups(root: &mut toml::Table, groups: &[Value], file: &str) -> Result<()> {
    let named: Vec<&str> = groups.iter().filter_map(|g| g.get("cgroup").and_then(Value::as_str)).collect();
    if named.is_empty() {
        return Ok(());
    }
    let list = match root.entry("cgroup").or_insert_with(|| Value::Array(Vec::new())) {
        Value::Array(l) => l,
        v => {
            return Err(SimError::bad_value(
                file,
                "cgroup",
                format!("invalid type: {}", v.type_str()),
                "[[cgroup]] tables",
            ))
        }
    };
    let mut have: Vec<String> =
        list.iter().filter_map(|c| c.get("path").and_then(Value::as_str)).map(str::to_string).collect();
    for path in named {
        let ends = path.match_indices('/').map(|(i, _)| i).skip(1).chain([path.len()]);
        for end in ends {
            let p = &path[..end];
            if !have.iter().any(|h| h == p) {
                let mut t = toml::Table::new();
                t.insert("path".into(), Value::String(p.to_string()));
                list.push(Value::Table(t));
                have.push(p.to_string());
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::scenario::rtapp::workload_tree;

    #[test]
    fn a_taskgroup_is_the_tasks_cgroup_and_a_cgroup_of_defaults() {
        let text = r#"{"tasks": {
            "a": {"taskgroup": "/tg1/tg11", "run": 1000, "sleep": 1000},
            "b": {"phases": {"p1": {"taskgroup": "/tg2/", "run": 10}, "p2": {"run": 10}}},
            "c": {"taskgroup": "", "run": 10},
            "d": {"policy": "SCHED_FIFO", "run": 10}}}"#;
        let root = workload_tree(text, "w.json").expect("import");
        let cg: Vec<Option<&str>> = root["task"]
            .as_array()
            .expect("tasks")
            .iter()
            .map(|t| t.get("cgroup").and_then(toml::Value::as_str))
            .collect();
        assert_eq!(cg, [Some("/tg1/tg11"), Some("/tg2"), None, None]);
        let paths: Vec<&str> = root["cgroup"]
            .as_array()
            .expect("cgroups")
            .iter()
            .filter_map(|c| c.get("path").and_then(toml::Value::as_str))
            .collect();
        assert_eq!(paths, ["/tg1", "/tg1/tg11", "/tg2"]);
        // And the scenario it makes loads: the groups are the tasks' cgroups.
        let machine = [("machine.preset".to_string(), "4cpu".to_string())];
        let sc = crate::scenario::load_as(text, "w.json", crate::scenario::Format::RtApp, &machine).expect("scenario");
        assert_eq!(sc.cgroups.len(), 3);
        assert_eq!(sc.groups[0].cgroup, 2);
    }

    #[test]
    fn what_rt_app_or_the_model_refuses() {
        let cases = [
            (r#"{"tasks": {"a": {"taskgroup": "tg1", "run": 10}}}"#, "SL102", "tasks.a.taskgroup"),
            (r#"{"tasks": {"a": {"taskgroup": "/a/../b", "run": 10}}}"#, "SL102", "tasks.a.taskgroup"),
            (r#"{"tasks": {"a": {"taskgroup": 3, "run": 10}}}"#, "SL102", "tasks.a.taskgroup"),
            (
                r#"{"tasks": {"a": {"policy": "SCHED_FIFO", "taskgroup": "/t", "run": 10}}}"#,
                "SL102",
                "on an RT or deadline thread",
            ),
            (
                r#"{"tasks": {"a": {"phases": {"p1": {"taskgroup": "/x", "run": 10}, "p2": {"taskgroup": "/y", "run": 10}}}}}"#,
                "SL120",
                "tasks.a.phases.p2.taskgroup: not modelled by schedlab: a phase that moves the thread from task group /x to /y",
            ),
            (
                r#"{"tasks": {"a": {"phases": {"p1": {"run": 10}, "p2": {"taskgroup": "/y", "run": 10}}}}}"#,
                "SL120",
                "from task group / to /y",
            ),
        ];
        for (text, code, want) in cases {
            let e = workload_tree(text, "w.json").expect_err(text);
            assert!(e.to_string().contains(want), "{text}: {e}");
            assert_eq!(e.code(), code, "{text}: {e}");
        }
    }
}

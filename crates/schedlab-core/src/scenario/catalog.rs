//! The scenario format's vocabulary, read off the code: the keys each table
//! accepts (from the serde structs themselves, and an experiment's from
//! `experiment.rs`), the program ops, the
//! kernel versions, machine presets, sched features and sysctls.
//! `schedlab._native.catalog()` hands it to Python, and
//! tests/repo/test_docs.py holds docs/scenario.md to it, so the two cannot drift.

use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde_json::{json, Value};

use crate::kernel::config::{RawCosts, RawKernel, RawKtask, RawWorkqueue};
use crate::kernel::features::ALL;
use crate::kernel::version::{KernelVersion, KNOWN_VERSIONS};
use crate::kernel::{KernelConfig, Tunables};
use crate::machine::disk::RawDisk;
use crate::machine::{MachineSpec, PRESETS};
use crate::workload::compile::{RawRtMigrateTest, RawTask};
use crate::workload::compile_ops::OPS_ACCEPTED;
use crate::workload::dbench::RawDbench;

use super::{experiment, experiment_table, RawMeasure, RawScenario};

/// A deserializer that answers nothing and remembers the field names a
/// derived `Deserialize` hands to `deserialize_struct`.
struct FieldNames<'a>(&'a mut &'static [&'static str]);

#[derive(Debug)]
struct Stop;

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("field names read")
    }
}

impl std::error::Error for Stop {}

impl de::Error for Stop {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        Stop
    }
}

impl<'de> Deserializer<'de> for FieldNames<'_> {
    type Error = Stop;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
        Err(Stop)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Stop> {
        *self.0 = fields;
        Err(Stop)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map enum identifier ignored_any
    }
}

/// The keys a `#[derive(Deserialize)]` struct accepts.
fn keys_of<'de, T: Deserialize<'de>>() -> Vec<&'static str> {
    let mut fields: &'static [&'static str] = &[];
    let _ = T::deserialize(FieldNames(&mut fields));
    fields.to_vec()
}

/// The scenario's sections: the top-level keys that hold a table or an
/// array of tables (a `set` table may name one bare, `kernel.ktask.x = 1`).
pub fn sections() -> Vec<&'static str> {
    keys_of::<RawScenario>().into_iter().filter(|k| !matches!(*k, "name" | "description")).collect()
}

/// Everything a scenario may name, as JSON: `keys` (per table), `ops`,
/// `versions`, `presets` ({name, description}), `features` ({name, doc,
/// default: {version: on/off, or null where the version lacks it}}),
/// `sysctls` ({name, default: {version: value, or null}}).
pub fn catalog() -> Value {
    let versions: Vec<(&str, KernelVersion)> =
        KNOWN_VERSIONS.iter().filter_map(|v| KernelVersion::parse(v).map(|kv| (*v, kv))).collect();
    let configs: Vec<(&str, KernelConfig)> = versions.iter().map(|(v, kv)| (*v, KernelConfig::defaults(*kv))).collect();
    let features: Vec<Value> = ALL
        .iter()
        .map(|f| {
            let by_version: serde_json::Map<String, Value> =
                versions.iter().map(|(v, kv)| (v.to_string(), json!(f.default_for(*kv)))).collect();
            json!({"name": f.name(), "doc": f.doc(), "default": by_version})
        })
        .collect();
    let sysctls: Vec<Value> = Tunables::NAMES
        .iter()
        .map(|name| {
            let by_version: serde_json::Map<String, Value> = configs
                .iter()
                .map(|(v, k)| {
                    let has = Tunables::names_for(&k.mech, k.version).contains(name);
                    (v.to_string(), if has { json!(k.sysctl.as_map()[name]) } else { Value::Null })
                })
                .collect();
            json!({"name": name, "default": by_version})
        })
        .collect();
    let top = [keys_of::<RawScenario>(), vec!["experiment", "variant"]].concat();
    json!({
        "keys": {
            "": top,
            "machine": keys_of::<MachineSpec>(),
            "kernel": keys_of::<RawKernel>(),
            "kernel.costs": keys_of::<RawCosts>(),
            "kernel.ktask": keys_of::<RawKtask>(),
            "measure": keys_of::<RawMeasure>(),
            "task": keys_of::<RawTask>(),
            "rt_migrate_test": keys_of::<RawRtMigrateTest>(),
            "machine.disk": keys_of::<RawDisk>(),
            "kernel.workqueue": keys_of::<RawWorkqueue>(),
            "dbench": keys_of::<RawDbench>(),
            "kernel.vm": keys_of::<crate::kernel::vm::RawVm>(),
            "memory": keys_of::<crate::kernel::vm::RawMemory>(),
            "channel": crate::workload::channel::CHANNEL_KEYS,
            "experiment": experiment::EXPERIMENT_KEYS,
            "experiment.metrics.NAME": experiment::METRIC_KEYS,
            "experiment.derive": experiment::DERIVE_KEYS,
            "experiment.band": experiment::BAND_KEYS,
            "experiment.table": experiment_table::TABLE_KEYS,
            "experiment.mmtests": experiment_table::MMTESTS_KEYS,
            "variant": experiment::VARIANT_KEYS,
        },
        "ops": OPS_ACCEPTED.split(", ").collect::<Vec<_>>(),
        "versions": KNOWN_VERSIONS,
        "presets": PRESETS.iter().map(|(n, d)| json!({"name": n, "description": d})).collect::<Vec<_>>(),
        "features": features,
        "sysctls": sysctls,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_come_from_the_structs() {
        let c = catalog();
        let measure: Vec<&str> = c["keys"]["measure"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        assert!(measure.contains(&"duration") && measure.contains(&"limit"), "{measure:?}");
        assert!(c["keys"]["task"].as_array().unwrap().iter().any(|v| v == "program"));
        let feature = |n: &str| c["features"].as_array().unwrap().iter().find(|f| f["name"] == n).unwrap().clone();
        assert_eq!(feature("NEXT_BUDDY")["default"]["6.1"], json!(false));
        assert_eq!(feature("NEXT_BUDDY")["default"]["2.6.24"], Value::Null);
        assert!(feature("NEXT_BUDDY")["doc"].as_str().unwrap().starts_with("Prefer the wakee"));
        let sysctl = |n: &str| c["sysctls"].as_array().unwrap().iter().find(|f| f["name"] == n).unwrap().clone();
        assert_eq!(sysctl("kernel.sched_base_slice_ns")["default"]["6.1"], Value::Null);
        assert_eq!(sysctl("kernel.sched_latency_ns")["default"]["6.6"], Value::Null);
        assert_eq!(sysctl("kernel.sched_rt_runtime_us")["default"]["2.6.24"], Value::Null);
        assert_eq!(sysctl("kernel.sched_rt_runtime_us")["default"]["6.1"], json!(950_000));
    }
}

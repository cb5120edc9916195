//! A report handed to Python as Python objects, built straight from the
//! core's report types: the objects `json.loads` makes of the report's JSON
//! text (`schedlab_core::report::sorted`), without that text.
//!
//! Writing the JSON and parsing it again was most of a small run's cost on
//! a large machine: a one-task 100 ms run on smp1024 spent 155 M
//! instructions writing 2.5 MB of JSON and 320 M in `json.loads`, against
//! 40 M simulating (issue 42). Here every object's keys go in the order the
//! JSON has them (sorted; of two equal keys the later wins), a struct's
//! keys are made once per run, non-finite floats become `None` and an f32
//! is widened to f64 — what serde_json and `json.loads` do — so every
//! report reads, and prints with `json.dump`, exactly as before.
//!
//! The run's heap budget counts these objects: [`PER_VALUE`] bytes a value
//! beside the core's own live heap, looked at every [`CHECK_EVERY`] values;
//! a report that would pass the budget stops with SL210 before the
//! interpreter runs out of memory.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString};
use pyo3::BoundObject;
use schedlab_core::engine::heap::{format_bytes, LIVE_BYTES};
use serde::ser::{self, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::Ordering::Relaxed;

/// Bytes of Python objects a report value costs: mpstat samples took 843
/// a row of 12 values (smp1024, 4 s at a 4 ms interval: 824 MiB of
/// objects), task rows about 1,300 a row of 35 (small integers are shared).
pub(crate) const PER_VALUE: u64 = 72;

/// Values made between two looks at the heap.
const CHECK_EVERY: u32 = 1024;

/// Why the building stopped.
#[derive(Debug)]
pub(crate) enum Error {
    /// The core's heap and the objects made so far passed the budget:
    /// (the bytes then, the values made).
    OverBudget(u64, u64),
    /// A Python call failed (out of memory, most likely).
    Py(PyErr),
    /// A value JSON cannot hold (a map key that is not a string or number).
    Custom(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::OverBudget(bytes, values) => {
                write!(f, "{} values, about {} with the core's heap", values, format_bytes(*bytes))
            }
            Error::Py(e) => write!(f, "{e}"),
            Error::Custom(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error::Custom(msg.to_string())
    }
}

impl From<PyErr> for Error {
    fn from(e: PyErr) -> Self {
        Error::Py(e)
    }
}

/// `value` as the Python objects of its sorted JSON, within `budget`
/// (bytes of the core's heap plus [`PER_VALUE`] a value made).
pub(crate) fn to_python<'py, T: Serialize + ?Sized>(
    py: Python<'py>,
    value: &T,
    budget: Option<u64>,
) -> Result<Bound<'py, PyAny>, Error> {
    let mut b = Builder::new(py, budget);
    value.serialize(Ser { b: &mut b })
}

/// What the objects share: the interpreter, every key made so far, the
/// layouts of the objects seen, the values of the open arrays and objects,
/// the count of values for the budget.
struct Builder<'py> {
    py: Python<'py>,
    /// Every distinct key: its text and its string, made once a run (as
    /// `json.loads` shares a key's string across a document).
    names: Vec<(Box<str>, Bound<'py, PyString>)>,
    /// A key's place in `names` by its text.
    by_text: BTreeMap<Box<str>, u32>,
    /// A struct field's place in `names` by the address and length of its
    /// `&'static str` (a direct-mapped cache in front of `by_text`).
    by_static: Vec<(usize, usize, u32)>,
    /// Any key's place by the address and length of its text, checked
    /// against the text (u32::MAX: empty).
    by_addr: Vec<u32>,
    /// The layouts of the objects seen.
    layouts: Vec<Layout<'py>>,
    /// A layout's place in `layouts` by its keys.
    layout_index: BTreeMap<Vec<u32>, u32>,
    /// A direct-mapped cache in front of `layout_index`, by a hash of the
    /// keys (u32::MAX: empty).
    layout_slots: Vec<u32>,
    /// Short string values made, by a hash of their text: a report repeats
    /// a few (cpulists, policies, domain names) thousands of times, and
    /// one object serves them all.
    strs: Vec<Option<(Box<str>, Bound<'py, PyString>)>>,
    /// The elements of the arrays being built, innermost last.
    items: Vec<Bound<'py, PyAny>>,
    /// The entries (key's place, value) of the objects being built.
    entries: Vec<(u32, Bound<'py, PyAny>)>,
    /// The value made last is a list or a dict.
    container: bool,
    values: u64,
    since: u32,
    budget: Option<u64>,
}

/// How the objects with one sequence of keys are made.
struct Layout<'py> {
    /// The keys in the order serde gave them.
    keys: Vec<u32>,
    /// Indices into the entries in the JSON's order: sorted by key, and of
    /// two equal keys the later.
    order: Vec<u32>,
    /// A dict with the keys in that order: each such object starts as a
    /// copy of it. Its values are the first such object's where those
    /// are immutable and often the same object again (None, a bool, an
    /// int, a short string: CPython keeps one object for each small int,
    /// and `Builder::str` one for each short text), else None.
    template: Bound<'py, PyDict>,
    /// The template's values, in `order`: an entry whose value is the
    /// same object is in the copy already.
    values: Vec<Bound<'py, PyAny>>,
}

/// Slots of the key caches (a report has a few hundred field names).
const ADDR_SLOTS: usize = 1 << ADDR_BITS;
const ADDR_BITS: u32 = 12;

/// Slots of the layout cache.
const LAYOUT_SLOTS: usize = 1024;

/// Slots of the short-string cache, and the longest text it keeps.
const STR_SLOTS: usize = 4096;
const STR_MAX: usize = 32;

/// Layouts kept at most (a map whose keys differ from row to row makes a
/// layout each; past this, such objects are sorted one by one).
const MAX_LAYOUTS: usize = 4096;

/// FNV-1a over the key places: an object's layout slot.
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x100_0000_01b3;

impl<'py> Builder<'py> {
    fn new(py: Python<'py>, budget: Option<u64>) -> Self {
        Builder {
            py,
            names: Vec::new(),
            by_text: BTreeMap::new(),
            by_static: vec![(0, 0, 0); ADDR_SLOTS],
            by_addr: vec![u32::MAX; ADDR_SLOTS],
            layouts: Vec::new(),
            layout_index: BTreeMap::new(),
            layout_slots: vec![u32::MAX; LAYOUT_SLOTS],
            strs: vec![None; STR_SLOTS],
            items: Vec::new(),
            entries: Vec::new(),
            container: false,
            values: 0,
            since: 0,
            budget,
        }
    }

    /// One more value; every CHECK_EVERY, the budget.
    fn made(&mut self) -> Result<(), Error> {
        self.values += 1;
        self.since += 1;
        if self.since < CHECK_EVERY {
            return Ok(());
        }
        self.since = 0;
        match self.budget {
            Some(budget) => {
                let bytes = LIVE_BYTES.load(Relaxed) as u64 + self.values * PER_VALUE;
                if bytes > budget {
                    Err(Error::OverBudget(bytes, self.values))
                } else {
                    Ok(())
                }
            }
            None => Ok(()),
        }
    }

    fn leaf(&mut self, v: Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>, Error> {
        self.made()?;
        self.container = false;
        Ok(v)
    }

    /// The place of a key given by its text: a slot picked by the text's
    /// address and length, checked by the text (a flattened struct's
    /// fields come as map keys, the same `&'static str` each time), then a
    /// search.
    fn name(&mut self, text: &str) -> u32 {
        let slot = addr_slot(text);
        let i = self.by_addr[slot];
        if (i as usize) < self.names.len() && *self.names[i as usize].0 == *text {
            return i;
        }
        let i = match self.by_text.get(text) {
            Some(&i) => i,
            None => {
                let i = self.names.len() as u32;
                self.names.push((text.into(), PyString::new(self.py, text)));
                self.by_text.insert(text.into(), i);
                i
            }
        };
        self.by_addr[slot] = i;
        i
    }

    /// The place of a struct's field name: a `&'static str` never changes,
    /// so its address and length find it.
    fn static_name(&mut self, text: &'static str) -> u32 {
        let slot = addr_slot(text);
        let (addr, len, i) = self.by_static[slot];
        if addr == text.as_ptr() as usize && len == text.len() {
            return i;
        }
        let i = self.name(text);
        self.by_static[slot] = (text.as_ptr() as usize, text.len(), i);
        i
    }

    /// The dict of the entries from `start` on (`hash`: FNV-1a of their
    /// key places), in the JSON's order: sorted keys, and of two equal
    /// keys (a flattened field named like its neighbour) the later
    /// (report::sorted). The entries are taken off the stack.
    fn dict(&mut self, start: usize, hash: u64) -> Result<Bound<'py, PyDict>, Error> {
        let slot = (hash % LAYOUT_SLOTS as u64) as usize;
        let same = |l: &Layout<'py>, e: &[(u32, Bound<'py, PyAny>)]| {
            l.keys.len() == e.len() && l.keys.iter().zip(e).all(|(k, (ek, _))| k == ek)
        };
        let cached = self.layout_slots[slot];
        let found =
            if (cached as usize) < self.layouts.len() && same(&self.layouts[cached as usize], &self.entries[start..]) {
                Some(cached)
            } else {
                let keys: Vec<u32> = self.entries[start..].iter().map(|e| e.0).collect();
                match self.layout_index.get(&keys) {
                    Some(&i) => Some(i),
                    None if self.layouts.len() < MAX_LAYOUTS => {
                        let order = self.order(start);
                        let template = PyDict::new(self.py);
                        let mut values = Vec::with_capacity(order.len());
                        for &i in &order {
                            let (k, v) = &self.entries[start + i as usize];
                            let v = if shareable(v) { v.clone() } else { self.py.None().into_bound(self.py) };
                            template.set_item(&self.names[*k as usize].1, &v)?;
                            values.push(v);
                        }
                        let i = self.layouts.len() as u32;
                        self.layouts.push(Layout { keys: keys.clone(), order, template, values });
                        self.layout_index.insert(keys, i);
                        Some(i)
                    }
                    None => None,
                }
            };
        let d = match found {
            Some(i) => {
                self.layout_slots[slot] = i;
                let layout = &self.layouts[i as usize];
                let d = layout.template.copy()?;
                for (&j, t) in layout.order.iter().zip(&layout.values) {
                    let (k, v) = &self.entries[start + j as usize];
                    if !t.is(v) {
                        d.set_item(&self.names[*k as usize].1, v)?;
                    }
                }
                d
            }
            None => {
                // Past MAX_LAYOUTS: sorted on its own.
                let d = PyDict::new(self.py);
                for j in self.order(start) {
                    let (k, v) = &self.entries[start + j as usize];
                    d.set_item(&self.names[*k as usize].1, v)?;
                }
                d
            }
        };
        self.entries.truncate(start);
        Ok(d)
    }

    /// The indices of the entries from `start` on, in the JSON's order.
    fn order(&self, start: usize) -> Vec<u32> {
        let entries = &self.entries[start..];
        let text = |i: &u32| &*self.names[entries[*i as usize].0 as usize].0;
        let mut order: Vec<u32> = (0..entries.len() as u32).collect();
        order.sort_by(|a, b| text(a).cmp(text(b)));
        order.dedup_by(|later, earlier| {
            let same = text(later) == text(earlier);
            if same {
                std::mem::swap(later, earlier);
            }
            same
        });
        order
    }
}

/// A value a layout's template may hold for every object of the layout:
/// one that cannot change (None, a bool, an int, a string).
fn shareable(v: &Bound<'_, PyAny>) -> bool {
    v.is_none()
        || v.is_exact_instance_of::<PyInt>()
        || v.is_exact_instance_of::<PyString>()
        || v.is_exact_instance_of::<PyBool>()
}

/// A key cache's slot for a text: its address and length.
fn addr_slot(text: &str) -> usize {
    // Fibonacci hashing: the top bits of the product depend on every bit
    // of the address, so names laid out a power of two apart do not share
    // a slot (they did with the low bits, and two hot names in one slot
    // evicted each other on every use).
    let key = (text.as_ptr() as u64) ^ ((text.len() as u64) << 48);
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - ADDR_BITS)) as usize
}

struct Ser<'a, 'py> {
    b: &'a mut Builder<'py>,
}

impl<'a, 'py> Ser<'a, 'py> {
    fn object(self, variant: Option<&'static str>) -> Object<'a, 'py> {
        let start = self.b.entries.len();
        Object { b: self.b, start, hash: FNV_OFFSET, key: None, variant }
    }

    fn array(self, variant: Option<&'static str>) -> Array<'a, 'py> {
        let start = self.b.items.len();
        Array { b: self.b, start, atomic: true, variant }
    }

    fn int<T: IntoPyObject<'py>>(self, v: T) -> Result<Bound<'py, PyAny>, Error> {
        let py = self.b.py;
        let o = v.into_pyobject(py).map_err(Into::into)?.into_bound().into_any();
        self.b.leaf(o)
    }

    fn float(self, v: f64) -> Result<Bound<'py, PyAny>, Error> {
        // serde_json writes a NaN or an infinity as null.
        let o =
            if v.is_finite() { PyFloat::new(self.b.py, v).into_any() } else { self.b.py.None().into_bound(self.b.py) };
        self.b.leaf(o)
    }

    fn str(self, v: &str) -> Result<Bound<'py, PyAny>, Error> {
        if v.len() > STR_MAX {
            let o = PyString::new(self.b.py, v).into_any();
            return self.b.leaf(o);
        }
        let h = v.bytes().fold(FNV_OFFSET, |h, c| (h ^ u64::from(c)).wrapping_mul(FNV_PRIME));
        let slot = &mut self.b.strs[(h % STR_SLOTS as u64) as usize];
        let o = match slot {
            Some((text, o)) if **text == *v => o.clone(),
            _ => {
                let o = PyString::new(self.b.py, v);
                *slot = Some((v.into(), o.clone()));
                o
            }
        };
        self.b.leaf(o.into_any())
    }

    /// `{variant: value}`, as serde_json writes an enum's non-unit variant.
    fn wrap(b: &mut Builder<'py>, variant: &'static str, v: Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>, Error> {
        let d = PyDict::new(b.py);
        let k = b.static_name(variant);
        d.set_item(&b.names[k as usize].1, v)?;
        b.made()?;
        b.container = true;
        Ok(d.into_any())
    }
}

/// An array being built: its elements wait on `Builder::items`.
struct Array<'a, 'py> {
    b: &'a mut Builder<'py>,
    start: usize,
    /// No element is a list or a dict.
    atomic: bool,
    /// A tuple variant's name: the list is wrapped in `{name: [...]}`.
    variant: Option<&'static str>,
}

impl<'py> Array<'_, 'py> {
    fn element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        let o = v.serialize(Ser { b: self.b })?;
        self.atomic &= !self.b.container;
        self.b.items.push(o);
        Ok(())
    }

    fn close(self) -> Result<Bound<'py, PyAny>, Error> {
        let list = PyList::new(self.b.py, self.b.items.drain(self.start..))?;
        if self.atomic {
            // A list of numbers, strings and None can be in no reference
            // cycle: the collector need not look at it (CPython does the
            // same for such tuples and dicts). A report's lists are mostly
            // these (schedstat's per-CPU [idle, busy, newidle] triples),
            // and every full collection of a program holding a report
            // would walk them. Appending a container to one later is safe:
            // a cycle through it is then left to reference counting.
            // SAFETY: `list` is a live list owned here; untracking a
            // tracked object is what the GC API is for.
            unsafe { pyo3::ffi::PyObject_GC_UnTrack(list.as_ptr().cast()) };
        }
        self.b.made()?;
        self.b.container = true;
        match self.variant {
            Some(name) => Ser::wrap(self.b, name, list.into_any()),
            None => Ok(list.into_any()),
        }
    }
}

/// An object being built: its entries wait on `Builder::entries` and are
/// put in key order at the end.
struct Object<'a, 'py> {
    b: &'a mut Builder<'py>,
    start: usize,
    /// FNV-1a of the entries' key places so far.
    hash: u64,
    /// A map's key, waiting for its value.
    key: Option<u32>,
    /// A struct variant's name: the object is wrapped in `{name: {...}}`.
    variant: Option<&'static str>,
}

impl<'py> Object<'_, 'py> {
    fn entry<T: Serialize + ?Sized>(&mut self, key: u32, v: &T) -> Result<(), Error> {
        let o = v.serialize(Ser { b: self.b })?;
        self.b.entries.push((key, o));
        self.hash = (self.hash ^ u64::from(key)).wrapping_mul(FNV_PRIME);
        Ok(())
    }

    fn close(self) -> Result<Bound<'py, PyAny>, Error> {
        let d = self.b.dict(self.start, self.hash)?.into_any();
        self.b.made()?;
        self.b.container = true;
        match self.variant {
            Some(name) => Ser::wrap(self.b, name, d),
            None => Ok(d),
        }
    }
}

/// An integer is a Python int.
macro_rules! int_values {
    ($($method:ident $t:ty),*) => {
        $(fn $method(self, v: $t) -> Result<Self::Ok, Error> {
            self.int(v)
        })*
    };
}

impl<'a, 'py> ser::Serializer for Ser<'a, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    type SerializeSeq = Array<'a, 'py>;
    type SerializeTuple = Array<'a, 'py>;
    type SerializeTupleStruct = Array<'a, 'py>;
    type SerializeTupleVariant = Array<'a, 'py>;
    type SerializeMap = Object<'a, 'py>;
    type SerializeStruct = Object<'a, 'py>;
    type SerializeStructVariant = Object<'a, 'py>;

    fn serialize_bool(self, v: bool) -> Result<Self::Ok, Error> {
        let o = PyBool::new(self.b.py, v).to_owned().into_any();
        self.b.leaf(o)
    }
    int_values!(serialize_i8 i8, serialize_i16 i16, serialize_i32 i32, serialize_i64 i64, serialize_i128 i128);
    int_values!(serialize_u8 u8, serialize_u16 u16, serialize_u32 u32, serialize_u64 u64, serialize_u128 u128);
    fn serialize_f32(self, v: f32) -> Result<Self::Ok, Error> {
        // report::sorted widens an f32 to f64 before it prints it.
        self.float(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Result<Self::Ok, Error> {
        self.float(v)
    }
    fn serialize_char(self, v: char) -> Result<Self::Ok, Error> {
        self.str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<Self::Ok, Error> {
        self.str(v)
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Self::Ok, Error> {
        // serde_json writes bytes as an array of numbers.
        let mut a = self.array(None);
        for x in v {
            a.element(x)?;
        }
        a.close()
    }
    fn serialize_none(self) -> Result<Self::Ok, Error> {
        self.serialize_unit()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<Self::Ok, Error> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<Self::Ok, Error> {
        let o = self.b.py.None().into_bound(self.b.py);
        self.b.leaf(o)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<Self::Ok, Error> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<Self::Ok, Error> {
        self.str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, v: &T) -> Result<Self::Ok, Error> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<Self::Ok, Error> {
        let o = v.serialize(Ser { b: self.b })?;
        Ser::wrap(self.b, variant, o)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Array<'a, 'py>, Error> {
        Ok(self.array(None))
    }
    fn serialize_tuple(self, _: usize) -> Result<Array<'a, 'py>, Error> {
        Ok(self.array(None))
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Array<'a, 'py>, Error> {
        Ok(self.array(None))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Array<'a, 'py>, Error> {
        Ok(self.array(Some(variant)))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Object<'a, 'py>, Error> {
        Ok(self.object(None))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Object<'a, 'py>, Error> {
        Ok(self.object(None))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Object<'a, 'py>, Error> {
        Ok(self.object(Some(variant)))
    }
}

/// serde's four array traits, each the same element and end.
macro_rules! array_trait {
    ($trait:ident, $method:ident) => {
        impl<'py> ser::$trait for Array<'_, 'py> {
            type Ok = Bound<'py, PyAny>;
            type Error = Error;
            fn $method<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
                self.element(v)
            }
            fn end(self) -> Result<Self::Ok, Error> {
                self.close()
            }
        }
    };
}

array_trait!(SerializeSeq, serialize_element);
array_trait!(SerializeTuple, serialize_element);
array_trait!(SerializeTupleStruct, serialize_field);
array_trait!(SerializeTupleVariant, serialize_field);

impl<'py> ser::SerializeMap for Object<'_, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.key = Some(key.serialize(KeySer { b: self.b })?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        let key = self.key.take().ok_or_else(|| Error::Custom("a map value without its key".into()))?;
        self.entry(key, v)
    }
    fn end(self) -> Result<Self::Ok, Error> {
        self.close()
    }
}

/// serde's two struct traits: a field is an entry under its name.
macro_rules! struct_trait {
    ($trait:ident) => {
        impl<'py> ser::$trait for Object<'_, 'py> {
            type Ok = Bound<'py, PyAny>;
            type Error = Error;
            fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, v: &T) -> Result<(), Error> {
                let k = self.b.static_name(key);
                self.entry(k, v)
            }
            fn end(self) -> Result<Self::Ok, Error> {
                self.close()
            }
        }
    };
}

struct_trait!(SerializeStruct);
struct_trait!(SerializeStructVariant);

/// A map's key, as serde_json writes it: a string, or a number or bool
/// written as one; its place in `Builder::names`.
struct KeySer<'a, 'py> {
    b: &'a mut Builder<'py>,
}

impl KeySer<'_, '_> {
    fn text(self, s: &str) -> Result<u32, Error> {
        Ok(self.b.name(s))
    }

    fn float(self, v: f64) -> Result<u32, Error> {
        match serde_json::Number::from_f64(v) {
            Some(n) => self.text(&n.to_string()),
            None => Err(Error::Custom(format!("a map key must be a finite number, not {v}"))),
        }
    }
}

/// An integer key is written as its digits.
macro_rules! int_keys {
    ($($method:ident $t:ty),*) => {
        $(fn $method(self, v: $t) -> Result<u32, Error> {
            self.text(&v.to_string())
        })*
    };
}

/// A key of a kind JSON cannot have.
fn not_a_key<T>(what: &str) -> Result<T, Error> {
    Err(Error::Custom(format!("a map key must be a string, a number or a bool, not {what}")))
}

impl<'a, 'py> ser::Serializer for KeySer<'a, 'py> {
    type Ok = u32;
    type Error = Error;
    type SerializeSeq = ser::Impossible<u32, Error>;
    type SerializeTuple = ser::Impossible<u32, Error>;
    type SerializeTupleStruct = ser::Impossible<u32, Error>;
    type SerializeTupleVariant = ser::Impossible<u32, Error>;
    type SerializeMap = ser::Impossible<u32, Error>;
    type SerializeStruct = ser::Impossible<u32, Error>;
    type SerializeStructVariant = ser::Impossible<u32, Error>;

    fn serialize_bool(self, v: bool) -> Result<u32, Error> {
        self.text(if v { "true" } else { "false" })
    }
    int_keys!(serialize_i8 i8, serialize_i16 i16, serialize_i32 i32, serialize_i64 i64, serialize_i128 i128);
    int_keys!(serialize_u8 u8, serialize_u16 u16, serialize_u32 u32, serialize_u64 u64, serialize_u128 u128);
    fn serialize_f32(self, v: f32) -> Result<u32, Error> {
        self.float(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Result<u32, Error> {
        self.float(v)
    }
    fn serialize_char(self, v: char) -> Result<u32, Error> {
        self.text(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<u32, Error> {
        self.text(v)
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<u32, Error> {
        not_a_key("bytes")
    }
    fn serialize_none(self) -> Result<u32, Error> {
        not_a_key("null")
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<u32, Error> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<u32, Error> {
        not_a_key("null")
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<u32, Error> {
        not_a_key("null")
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<u32, Error> {
        Ok(self.b.static_name(variant))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, v: &T) -> Result<u32, Error> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<u32, Error> {
        not_a_key("an object")
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        not_a_key("an array")
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Error> {
        not_a_key("an array")
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct, Error> {
        not_a_key("an array")
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        not_a_key("an object")
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Error> {
        not_a_key("an object")
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Error> {
        not_a_key("an object")
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        not_a_key("an object")
    }
}

//! JSON with every object's keys sorted, written without building the
//! document in memory first.
//!
//! The report's bytes are compact JSON with sorted keys: what
//! `serde_json::to_value(report).to_string()` prints. That route builds a
//! `Value` tree first, about six times the size of the text it becomes (a
//! BTreeMap node and a String per key, per row); for a report with a
//! hundred thousand tasks or a million mpstat samples the tree was the
//! run's peak. This serializer writes the same bytes straight from the
//! report's types: arrays stream, and an object holds its entries' bytes
//! only until it is closed and its keys sorted, so the peak is about twice
//! the text. Leaves (numbers, strings) are formatted by serde_json itself,
//! so a float or an escape reads exactly as before.
//!
//! With a heap budget (engine::heap), the live heap is looked at every
//! [`CHECK_EVERY`] array elements and at each object's end: serialising a
//! report too large for the budget stops with SL210 rather than aborting.

use serde::ser::{self, Serialize};
use std::fmt;

use crate::engine::heap;

/// Array elements between two looks at the heap.
const CHECK_EVERY: u32 = 1024;

/// Why the writing stopped.
#[derive(Debug)]
pub enum Error {
    /// The live heap passed the budget (bytes live then).
    OverBudget(u64),
    /// A value JSON cannot hold (a map key that is not a string or number).
    Custom(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::OverBudget(live) => {
                write!(f, "the heap reached {} while writing the report", heap::format_bytes(*live))
            }
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

/// `value` as compact JSON with sorted keys (the bytes of
/// `serde_json::to_value(value).to_string()`).
pub fn to_string<T: Serialize + ?Sized>(value: &T, budget: Option<u64>) -> Result<String, Error> {
    let mut out = Vec::new();
    value.serialize(Writer { out: &mut out, budget, count: &mut 0 })?;
    // Every byte came from serde_json's own writers or from ASCII punctuation.
    String::from_utf8(out).map_err(|e| Error::Custom(e.to_string()))
}

/// A leaf, formatted by serde_json.
fn leaf<T: Serialize + ?Sized>(out: &mut Vec<u8>, v: &T) -> Result<(), Error> {
    serde_json::to_writer(out, v).map_err(|e| Error::Custom(e.to_string()))
}

struct Writer<'a> {
    out: &'a mut Vec<u8>,
    budget: Option<u64>,
    /// Elements since the last look at the heap.
    count: &'a mut u32,
}

impl<'a> Writer<'a> {
    fn check(budget: Option<u64>) -> Result<(), Error> {
        match budget.and_then(heap::over) {
            Some(live) => Err(Error::OverBudget(live)),
            None => Ok(()),
        }
    }

    fn object(self, variant: Option<&'static str>) -> Object<'a> {
        Object { out: self.out, budget: self.budget, count: self.count, entries: Vec::new(), key: None, variant }
    }
}

/// An array being written: its elements go straight out.
struct Array<'a> {
    out: &'a mut Vec<u8>,
    budget: Option<u64>,
    count: &'a mut u32,
    first: bool,
    /// A tuple variant's closing brace.
    variant: bool,
}

impl Array<'_> {
    fn element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        *self.count += 1;
        if *self.count >= CHECK_EVERY {
            *self.count = 0;
            Writer::check(self.budget)?;
        }
        v.serialize(Writer { out: self.out, budget: self.budget, count: self.count })
    }

    fn close(self) {
        self.out.push(b']');
        if self.variant {
            self.out.push(b'}');
        }
    }
}

/// An object being written: each entry's bytes are held until the end,
/// when they go out in key order.
struct Object<'a> {
    out: &'a mut Vec<u8>,
    budget: Option<u64>,
    count: &'a mut u32,
    entries: Vec<(String, Vec<u8>)>,
    /// A map's key, waiting for its value.
    key: Option<String>,
    /// A struct variant's name: the object is wrapped in `{"name": ...}`.
    variant: Option<&'static str>,
}

impl Object<'_> {
    fn entry<T: Serialize + ?Sized>(&mut self, key: String, v: &T) -> Result<(), Error> {
        let mut bytes = Vec::new();
        v.serialize(Writer { out: &mut bytes, budget: self.budget, count: self.count })?;
        self.entries.push((key, bytes));
        Ok(())
    }

    fn close(mut self) -> Result<(), Error> {
        // A BTreeMap's order; of two equal keys (a flattened field named
        // like its neighbour) the later wins, as an insert into the map.
        self.entries.sort_by(|a, b| a.0.cmp(&b.0));
        self.entries.dedup_by(|later, earlier| {
            let same = later.0 == earlier.0;
            if same {
                std::mem::swap(later, earlier);
            }
            same
        });
        if let Some(name) = self.variant {
            self.out.push(b'{');
            leaf(self.out, name)?;
            self.out.push(b':');
        }
        self.out.reserve(self.entries.iter().map(|(k, v)| k.len() + v.len() + 4).sum::<usize>() + 2);
        self.out.push(b'{');
        for (i, (k, v)) in self.entries.iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            leaf(self.out, k.as_str())?;
            self.out.push(b':');
            self.out.extend_from_slice(v);
        }
        self.out.push(b'}');
        if self.variant.is_some() {
            self.out.push(b'}');
        }
        self.entries = Vec::new();
        Writer::check(self.budget)
    }
}

impl<'a> ser::Serializer for Writer<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Array<'a>;
    type SerializeTuple = Array<'a>;
    type SerializeTupleStruct = Array<'a>;
    type SerializeTupleVariant = Array<'a>;
    type SerializeMap = Object<'a>;
    type SerializeStruct = Object<'a>;
    type SerializeStructVariant = Object<'a>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        leaf(self.out, &v)
    }
    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        leaf(self.out, &v)
    }
    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        leaf(self.out, &v)
    }
    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        leaf(self.out, &v)
    }
    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        leaf(self.out, &v)
    }
    fn serialize_i128(self, v: i128) -> Result<(), Error> {
        leaf(self.out, &v)
    }
    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        leaf(self.out, &v)
    }
    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        leaf(self.out, &v)
    }
    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        leaf(self.out, &v)
    }
    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        leaf(self.out, &v)
    }
    fn serialize_u128(self, v: u128) -> Result<(), Error> {
        leaf(self.out, &v)
    }
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        // to_value widens an f32 to f64 before it prints it.
        leaf(self.out, &f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        leaf(self.out, &v)
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        leaf(self.out, &v)
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        leaf(self.out, v)
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        leaf(self.out, v)
    }
    fn serialize_none(self) -> Result<(), Error> {
        self.serialize_unit()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<(), Error> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<(), Error> {
        leaf(self.out, variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, v: &T) -> Result<(), Error> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        let mut o = self.object(None);
        o.entry(variant.to_string(), v)?;
        o.close()
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Array<'a>, Error> {
        self.out.push(b'[');
        Ok(Array { out: self.out, budget: self.budget, count: self.count, first: true, variant: false })
    }
    fn serialize_tuple(self, len: usize) -> Result<Array<'a>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Array<'a>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Array<'a>, Error> {
        self.out.push(b'{');
        leaf(self.out, variant)?;
        self.out.extend_from_slice(b":[");
        Ok(Array { out: self.out, budget: self.budget, count: self.count, first: true, variant: true })
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Object<'a>, Error> {
        Ok(self.object(None))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Object<'a>, Error> {
        Ok(self.object(None))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Object<'a>, Error> {
        Ok(self.object(Some(variant)))
    }
}

impl ser::SerializeSeq for Array<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        self.element(v)
    }
    fn end(self) -> Result<(), Error> {
        self.close();
        Ok(())
    }
}

impl ser::SerializeTuple for Array<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        self.element(v)
    }
    fn end(self) -> Result<(), Error> {
        self.close();
        Ok(())
    }
}

impl ser::SerializeTupleStruct for Array<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        self.element(v)
    }
    fn end(self) -> Result<(), Error> {
        self.close();
        Ok(())
    }
}

impl ser::SerializeTupleVariant for Array<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        self.element(v)
    }
    fn end(self) -> Result<(), Error> {
        self.close();
        Ok(())
    }
}

impl ser::SerializeMap for Object<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        // serde_json's rule: a key is a string, or a number or bool written as one.
        let v = serde_json::to_value(key).map_err(|e| Error::Custom(e.to_string()))?;
        self.key = Some(match v {
            serde_json::Value::String(s) => s,
            serde_json::Value::Number(n) => n.to_string(),
            serde_json::Value::Bool(b) => b.to_string(),
            other => return Err(Error::Custom(format!("a map key must be a string, not {other}"))),
        });
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        let key = self.key.take().ok_or_else(|| Error::Custom("a map value without its key".into()))?;
        self.entry(key, v)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

impl ser::SerializeStruct for Object<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, v: &T) -> Result<(), Error> {
        self.entry(key.to_string(), v)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

impl ser::SerializeStructVariant for Object<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, v: &T) -> Result<(), Error> {
        self.entry(key.to_string(), v)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;
    use std::collections::BTreeMap;

    #[derive(Serialize)]
    enum Kind {
        Unit,
        New(u32),
        Tuple(u8, i8),
        Shape { z: f64, a: Option<f32> },
    }

    #[derive(Serialize)]
    struct Inner {
        zeta: f64,
        alpha: Vec<Kind>,
        #[serde(skip_serializing_if = "Option::is_none")]
        gone: Option<u8>,
        here: Option<u8>,
    }

    #[derive(Serialize)]
    struct Flat {
        m: u8,
        b: u8,
    }

    #[derive(Serialize)]
    struct Outer {
        name: String,
        inner: Inner,
        map: BTreeMap<String, i64>,
        nums: BTreeMap<u32, bool>,
        #[serde(flatten)]
        flat: Flat,
        floats: Vec<f64>,
        unit: (),
        tuple: (u8, String),
    }

    #[test]
    fn the_bytes_of_a_sorted_value() {
        let v = Outer {
            name: "q\"\u{1F600}\n\u{7}".into(),
            inner: Inner {
                zeta: 0.1 + 0.2,
                alpha: vec![Kind::Unit, Kind::New(7), Kind::Tuple(1, -1), Kind::Shape { z: -0.0, a: Some(1.5) }],
                gone: None,
                here: None,
            },
            map: [("b".to_string(), -3), ("a".to_string(), i64::MIN), ("B".to_string(), 0)].into(),
            nums: [(10, true), (9, false)].into(),
            flat: Flat { m: 1, b: 2 },
            floats: vec![f64::NAN, f64::INFINITY, 1e300, 5e-324, 3.0],
            unit: (),
            tuple: (4, "x".into()),
        };
        let want = serde_json::to_value(&v).unwrap().to_string();
        assert_eq!(to_string(&v, None).unwrap(), want);
    }

    #[test]
    fn a_budget_stops_the_writing() {
        // LIVE_BYTES is 0 without a counting allocator: a budget of 0 is
        // never passed, and a check does not fail for nothing.
        let v: Vec<u32> = (0..10_000).collect();
        assert!(to_string(&v, Some(0)).is_ok());
    }
}

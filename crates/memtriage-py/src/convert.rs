//! The engine's serde data as plain Python objects (dict, list, str, int, float,
//! bool, None): the same data as the CLI's `--json`, built straight from `Serialize`
//! without printing and parsing JSON text and without a `serde_json::Value` in
//! between (that detour allocated a sorted map per object and a `String` per key,
//! about as much user-space time as the kernel takes to read a small process).
//! `pythonize` does the same, but its releases are built against older pyo3.
//!
//! What serde_json would change is changed the same way, so both front ends agree:
//! a float that is not finite becomes `None` (JSON has no NaN), map keys become
//! strings, a unit enum variant is its name, a variant carrying data is
//! `{variant: data}`. Objects keep the struct's field order, as `--json` prints it.

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt, PyList, PyString};
use serde::ser::{self, Serialize};

use crate::errors::internal;

/// Any engine value as Python data.
pub fn to_py<'py, T: Serialize>(py: Python<'py>, value: &T) -> PyResult<Bound<'py, PyAny>> {
    value.serialize(ToPy { py }).map_err(|e| match e {
        ConvertError::Python(err) => err,
        ConvertError::Serde(msg) => {
            internal(format!("could not convert a result to Python: {msg}"))
        }
    })
}

#[derive(Debug)]
pub enum ConvertError {
    Python(PyErr),
    Serde(String),
}

impl fmt::Display for ConvertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConvertError::Python(e) => write!(f, "{e}"),
            ConvertError::Serde(msg) => f.write_str(msg),
        }
    }
}

impl std::error::Error for ConvertError {}

impl ser::Error for ConvertError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        ConvertError::Serde(msg.to_string())
    }
}

impl From<PyErr> for ConvertError {
    fn from(e: PyErr) -> Self {
        ConvertError::Python(e)
    }
}

type Out<'py> = Result<Bound<'py, PyAny>, ConvertError>;

/// Field names are the same few dozen `&'static str`s in every object, so each
/// becomes one Python string, made once (interned, its hash cached) and shared by
/// every dict after: no string made and hashed per key per object. Keyed by the
/// name's address (a `&'static str` never moves), hashed by that address alone.
/// Only touched with the GIL held.
static FIELD_NAMES: Mutex<Option<FieldNames>> = Mutex::new(None);

type FieldNames = HashMap<usize, Py<PyString>, BuildHasherDefault<AddressHasher>>;

/// An address is already unique: one multiply spreads it over the table, where
/// SipHash took a few percent of a snapshot's whole conversion.
#[derive(Default)]
struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

fn field_name<'py>(py: Python<'py>, name: &'static str) -> Bound<'py, PyString> {
    // Not `lock()`: making a string can run Python's GC, whose finalizers may
    // convert something too (on this thread, or on another once the GIL is let go);
    // that one makes its name anew rather than wait on this one.
    let Ok(mut names) = FIELD_NAMES.try_lock() else {
        return PyString::intern(py, name);
    };
    names
        .get_or_insert_with(FieldNames::default)
        .entry(name.as_ptr() as usize)
        .or_insert_with(|| PyString::intern(py, name).unbind())
        .bind(py)
        .clone()
}

#[derive(Clone, Copy)]
struct ToPy<'py> {
    py: Python<'py>,
}

impl<'py> ToPy<'py> {
    fn int<T>(self, value: T) -> Out<'py>
    where
        T: IntoPyObject<'py, Target = PyInt, Output = Bound<'py, PyInt>>,
        T::Error: Into<PyErr>,
    {
        let int = value
            .into_pyobject(self.py)
            .map_err(|e| ConvertError::Python(e.into()))?;
        Ok(int.into_any())
    }

    fn none(self) -> Out<'py> {
        Ok(self.py.None().into_bound(self.py))
    }

    /// `{variant: value}`, as serde_json writes an enum variant that carries data.
    fn tagged(self, variant: &'static str, value: Bound<'py, PyAny>) -> Out<'py> {
        let dict = PyDict::new(self.py);
        dict.set_item(field_name(self.py, variant), value)?;
        Ok(dict.into_any())
    }
}

impl<'py> ser::Serializer for ToPy<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = ConvertError;
    type SerializeSeq = Seq<'py>;
    type SerializeTuple = Seq<'py>;
    type SerializeTupleStruct = Seq<'py>;
    type SerializeTupleVariant = Seq<'py>;
    type SerializeMap = Map<'py>;
    type SerializeStruct = Map<'py>;
    type SerializeStructVariant = Map<'py>;

    fn serialize_bool(self, v: bool) -> Out<'py> {
        Ok(PyBool::new(self.py, v).to_owned().into_any())
    }
    fn serialize_i8(self, v: i8) -> Out<'py> {
        self.int(v)
    }
    fn serialize_i16(self, v: i16) -> Out<'py> {
        self.int(v)
    }
    fn serialize_i32(self, v: i32) -> Out<'py> {
        self.int(v)
    }
    fn serialize_i64(self, v: i64) -> Out<'py> {
        self.int(v)
    }
    fn serialize_i128(self, v: i128) -> Out<'py> {
        self.int(v)
    }
    fn serialize_u8(self, v: u8) -> Out<'py> {
        self.int(v)
    }
    fn serialize_u16(self, v: u16) -> Out<'py> {
        self.int(v)
    }
    fn serialize_u32(self, v: u32) -> Out<'py> {
        self.int(v)
    }
    fn serialize_u64(self, v: u64) -> Out<'py> {
        self.int(v)
    }
    fn serialize_u128(self, v: u128) -> Out<'py> {
        self.int(v)
    }
    fn serialize_f32(self, v: f32) -> Out<'py> {
        self.serialize_f64(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Out<'py> {
        if v.is_finite() {
            Ok(pyo3::types::PyFloat::new(self.py, v).into_any())
        } else {
            self.none()
        }
    }
    fn serialize_char(self, v: char) -> Out<'py> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Out<'py> {
        Ok(PyString::new(self.py, v).into_any())
    }
    fn serialize_bytes(self, v: &[u8]) -> Out<'py> {
        // serde_json writes bytes as a list of numbers.
        let list = PyList::empty(self.py);
        for b in v {
            list.append(*b)?;
        }
        Ok(list.into_any())
    }
    fn serialize_none(self) -> Out<'py> {
        self.none()
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Out<'py> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Out<'py> {
        self.none()
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Out<'py> {
        self.none()
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Out<'py> {
        Ok(field_name(self.py, variant).into_any())
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Out<'py> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Out<'py> {
        let value = value.serialize(self)?;
        self.tagged(variant, value)
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Seq<'py>, ConvertError> {
        Ok(Seq::new(self, None))
    }
    fn serialize_tuple(self, len: usize) -> Result<Seq<'py>, ConvertError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Seq<'py>, ConvertError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Seq<'py>, ConvertError> {
        Ok(Seq::new(self, Some(variant)))
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Map<'py>, ConvertError> {
        Ok(Map::new(self, None))
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Map<'py>, ConvertError> {
        Ok(Map::new(self, None))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Map<'py>, ConvertError> {
        Ok(Map::new(self, Some(variant)))
    }
}

/// A list being filled; `variant` wraps it as `{variant: [...]}` at the end.
pub struct Seq<'py> {
    to: ToPy<'py>,
    list: Bound<'py, PyList>,
    variant: Option<&'static str>,
}

impl<'py> Seq<'py> {
    fn new(to: ToPy<'py>, variant: Option<&'static str>) -> Self {
        Seq {
            to,
            list: PyList::empty(to.py),
            variant,
        }
    }

    fn push<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), ConvertError> {
        self.list.append(value.serialize(self.to)?)?;
        Ok(())
    }

    fn finish(self) -> Out<'py> {
        match self.variant {
            None => Ok(self.list.into_any()),
            Some(v) => self.to.tagged(v, self.list.into_any()),
        }
    }
}

/// Sequences, tuples and tuple structs all become a list the same way.
macro_rules! seq_like {
    ($($trait:ident :: $method:ident),*) => {$(
        impl<'py> ser::$trait for Seq<'py> {
            type Ok = Bound<'py, PyAny>;
            type Error = ConvertError;
            fn $method<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), ConvertError> {
                self.push(value)
            }
            fn end(self) -> Out<'py> {
                self.finish()
            }
        }
    )*};
}

seq_like!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

/// A dict being filled; `variant` wraps it as `{variant: {...}}` at the end.
pub struct Map<'py> {
    to: ToPy<'py>,
    dict: Bound<'py, PyDict>,
    key: Option<Bound<'py, PyString>>,
    variant: Option<&'static str>,
}

impl<'py> Map<'py> {
    fn new(to: ToPy<'py>, variant: Option<&'static str>) -> Self {
        Map {
            to,
            dict: PyDict::new(to.py),
            key: None,
            variant,
        }
    }

    fn field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), ConvertError> {
        let value = value.serialize(self.to)?;
        self.dict.set_item(field_name(self.to.py, key), value)?;
        Ok(())
    }

    fn finish(self) -> Out<'py> {
        match self.variant {
            None => Ok(self.dict.into_any()),
            Some(v) => self.to.tagged(v, self.dict.into_any()),
        }
    }
}

/// A map key as a string, the way serde_json writes keys: strings as they are,
/// integers and booleans as their JSON text; anything else is refused, as there.
fn key_string<'py>(key: Bound<'py, PyAny>) -> Result<Bound<'py, PyString>, ConvertError> {
    if let Ok(s) = key.cast::<PyString>() {
        return Ok(s.clone());
    }
    if let Ok(b) = key.cast::<PyBool>() {
        let text = if b.is_true() { "true" } else { "false" };
        return Ok(PyString::new(key.py(), text));
    }
    if key.cast::<PyInt>().is_ok() {
        return Ok(key.str()?);
    }
    Err(ConvertError::Serde("a map key must be a string".into()))
}

impl<'py> ser::SerializeMap for Map<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = ConvertError;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<(), ConvertError> {
        self.key = Some(key_string(key.serialize(self.to)?)?);
        Ok(())
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), ConvertError> {
        let key = self
            .key
            .take()
            .ok_or_else(|| ConvertError::Serde("a map value came without its key".into()))?;
        self.dict.set_item(key, value.serialize(self.to)?)?;
        Ok(())
    }
    fn end(self) -> Out<'py> {
        self.finish()
    }
}

impl<'py> ser::SerializeStruct for Map<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = ConvertError;
    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), ConvertError> {
        self.field(key, value)
    }
    fn end(self) -> Out<'py> {
        self.finish()
    }
}

impl<'py> ser::SerializeStructVariant for Map<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = ConvertError;
    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), ConvertError> {
        self.field(key, value)
    }
    fn end(self) -> Out<'py> {
        self.finish()
    }
}

//! Python pickles of plain data (protocols 0 to 5), read into [`Py`] values without
//! running anything: a class, a function or a `__reduce__` the pickle names becomes
//! [`Py::Opaque`], never an import or a call. Objects the pickle shares (its memo)
//! stay shared (`Rc`), so a snapshot that refers to one stack frame a thousand times
//! holds it once, and a pickle of references cannot blow up into copies.

use std::cell::RefCell;
use std::rc::Rc;

/// A dict's items in insertion order (keys compared as Python would for plain data).
pub type DictItems = Rc<RefCell<Vec<(Py, Py)>>>;

/// A value of the pickle.
#[derive(Debug, Clone)]
// A bool's and a small int's values are read and kept as the pickle holds them,
// though no analysis looks at one yet.
#[allow(dead_code)]
pub enum Py {
    None,
    Bool(bool),
    /// Integers up to 128 bits; larger ones are [`Py::Opaque`].
    Int(i128),
    Float(f64),
    Str(Rc<str>),
    Bytes(Rc<[u8]>),
    List(Rc<RefCell<Vec<Py>>>),
    /// Its items, and how deep tuples nest in it (bounded: dropping nested tuples
    /// recurses).
    Tuple(Rc<[Py]>, u16),
    Dict(DictItems),
    /// A set or frozenset.
    Set(Rc<RefCell<Vec<Py>>>),
    /// An object of a class, a global, an integer too large: not plain data.
    Opaque,
}

impl Py {
    /// The value of `key` in a dict with string keys.
    pub fn get(&self, key: &str) -> Option<Py> {
        let Py::Dict(d) = self else { return None };
        d.borrow()
            .iter()
            .find(|(k, _)| matches!(k, Py::Str(s) if &**s == key))
            .map(|(_, v)| v.clone())
    }

    /// The items of a list or tuple.
    pub fn items(&self) -> Option<Vec<Py>> {
        match self {
            Py::List(l) => Some(l.borrow().clone()),
            Py::Tuple(t, _) => Some(t.to_vec()),
            _ => None,
        }
    }

    pub fn int(&self) -> Option<i128> {
        match self {
            Py::Int(i) => Some(*i),
            Py::Bool(b) => Some(i128::from(*b)),
            _ => None,
        }
    }

    pub fn str(&self) -> Option<&str> {
        match self {
            Py::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn is_dict(&self) -> bool {
        matches!(self, Py::Dict(_))
    }
}

/// Why bytes are not a pickle this reader takes, with the byte offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PickleError {
    pub offset: usize,
    pub what: String,
}

impl std::fmt::Display for PickleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (at byte {})", self.what, self.offset)
    }
}

impl PickleError {
    /// The input ended before the pickle's STOP.
    pub fn truncated(&self) -> bool {
        self.what.starts_with("the pickle ends")
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    stack: Vec<Py>,
    marks: Vec<usize>,
    memo: Vec<Option<Py>>,
    made: Containers,
}

/// Every list, dict and set a pickle made: a pickle can put a list inside itself
/// (`l.append(l)`), a cycle `Rc` never frees, so they are emptied when the
/// [`Pickle`] goes.
#[derive(Debug, Default)]
struct Containers {
    lists: Vec<Rc<RefCell<Vec<Py>>>>,
    dicts: Vec<DictItems>,
}

/// A pickle read: its value, valid while this lives (values cloned out of it see
/// empty containers once it is dropped).
#[derive(Debug)]
pub struct Pickle {
    pub root: Py,
    made: Containers,
}

impl Drop for Pickle {
    fn drop(&mut self) {
        for l in &self.made.lists {
            l.borrow_mut().clear();
        }
        for d in &self.made.dicts {
            d.borrow_mut().clear();
        }
    }
}

/// Reads one pickle; bytes after its STOP are ignored, as Python's `pickle.load` does.
pub fn read(bytes: &[u8]) -> Result<Pickle, PickleError> {
    let mut r = Reader {
        bytes,
        at: 0,
        stack: Vec::new(),
        marks: Vec::new(),
        memo: Vec::new(),
        made: Containers::default(),
    };
    let result = r.run();
    // Emptied on failure too (when this drops): what was built may hold a cycle.
    let mut pickle = Pickle {
        root: Py::None,
        made: std::mem::take(&mut r.made),
    };
    pickle.root = result?;
    Ok(pickle)
}

impl<'a> Reader<'a> {
    fn fail<T>(&self, what: impl Into<String>) -> Result<T, PickleError> {
        Err(PickleError {
            offset: self.at,
            what: what.into(),
        })
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], PickleError> {
        match self
            .at
            .checked_add(n)
            .filter(|end| *end <= self.bytes.len())
        {
            Some(end) => {
                let s = &self.bytes[self.at..end];
                self.at = end;
                Ok(s)
            }
            None => self.fail("the pickle ends before its STOP (truncated)"),
        }
    }

    fn byte(&mut self) -> Result<u8, PickleError> {
        Ok(self.take(1)?[0])
    }

    fn le(&mut self, n: usize) -> Result<u64, PickleError> {
        let b = self.take(n)?;
        Ok(b.iter()
            .rev()
            .fold(0u64, |acc, x| (acc << 8) | u64::from(*x)))
    }

    fn sized(&mut self, n: usize) -> Result<usize, PickleError> {
        let len = self.le(n)?;
        usize::try_from(len).or_else(|_| self.fail("a length beyond memory"))
    }

    fn line(&mut self) -> Result<&'a [u8], PickleError> {
        let rest = &self.bytes[self.at..];
        match memchr::memchr(b'\n', rest) {
            Some(i) => {
                let l = &rest[..i];
                self.at += i + 1;
                Ok(l.strip_suffix(b"\r").unwrap_or(l))
            }
            None => self.fail("the pickle ends before its STOP (truncated)"),
        }
    }

    fn pop(&mut self) -> Result<Py, PickleError> {
        match self.stack.pop() {
            Some(v) => Ok(v),
            None => self.fail("a malformed pickle (it pops an empty stack)"),
        }
    }

    fn top(&mut self) -> Result<&mut Py, PickleError> {
        if self.stack.is_empty() {
            return self.fail("a malformed pickle (it uses an empty stack)");
        }
        let last = self.stack.len() - 1;
        Ok(&mut self.stack[last])
    }

    /// The values pushed since the last MARK, which is dropped.
    fn since_mark(&mut self) -> Result<Vec<Py>, PickleError> {
        let Some(mark) = self.marks.pop() else {
            return self.fail("a malformed pickle (no MARK)");
        };
        if mark > self.stack.len() {
            return self.fail("a malformed pickle (MARK beyond the stack)");
        }
        Ok(self.stack.split_off(mark))
    }

    /// Tuples nested deeper than this are refused: freeing them recurses, and a
    /// few kilobytes of pickle could nest them deep enough to overflow the stack.
    const MAX_TUPLE_DEPTH: u16 = 1000;

    fn tuple(&self, items: Vec<Py>) -> Result<Py, PickleError> {
        let inner = items
            .iter()
            .map(|i| match i {
                Py::Tuple(_, d) => *d,
                _ => 0,
            })
            .max()
            .unwrap_or(0);
        if inner >= Self::MAX_TUPLE_DEPTH {
            return self.fail("tuples nested more than 1000 deep");
        }
        Ok(Py::Tuple(items.into(), inner + 1))
    }

    fn list(&mut self, items: Vec<Py>) -> Py {
        let l = Rc::new(RefCell::new(items));
        self.made.lists.push(Rc::clone(&l));
        Py::List(l)
    }

    fn dict(&mut self) -> Py {
        let d = Rc::new(RefCell::new(Vec::new()));
        self.made.dicts.push(Rc::clone(&d));
        Py::Dict(d)
    }

    fn text(&self, b: &[u8]) -> Py {
        Py::Str(String::from_utf8_lossy(b).into())
    }

    fn put(&mut self, index: usize) -> Result<(), PickleError> {
        let v = self.top()?.clone();
        // Python numbers memo entries from 0 up, one per PUT: an index beyond the
        // bytes read so far is a pickle made to exhaust memory.
        if index > self.at {
            return self.fail("a memo index beyond the values read");
        }
        if self.memo.len() <= index {
            self.memo.resize(index + 1, None);
        }
        self.memo[index] = Some(v);
        Ok(())
    }

    fn get(&mut self, index: usize) -> Result<(), PickleError> {
        match self.memo.get(index).cloned().flatten() {
            Some(v) => {
                self.stack.push(v);
                Ok(())
            }
            None => self.fail(format!("a malformed pickle (memo {index} is unset)")),
        }
    }

    fn set_items(&mut self, items: Vec<Py>) -> Result<(), PickleError> {
        if items.len() % 2 != 0 {
            return self.fail("a malformed pickle (a key without a value)");
        }
        let Py::Dict(d) = self.top()?.clone() else {
            // SETITEMS on an object being built (`__setstate__` data): not plain data.
            return Ok(());
        };
        let mut d = d.borrow_mut();
        let mut it = items.into_iter();
        while let (Some(k), Some(v)) = (it.next(), it.next()) {
            match d.iter_mut().find(|(old, _)| same_key(old, &k)) {
                Some(slot) => slot.1 = v,
                None => d.push((k, v)),
            }
        }
        Ok(())
    }

    fn append(&mut self, items: Vec<Py>) -> Result<(), PickleError> {
        match self.top()?.clone() {
            Py::List(l) | Py::Set(l) => l.borrow_mut().extend(items),
            _ => {}
        }
        Ok(())
    }

    fn run(&mut self) -> Result<Py, PickleError> {
        loop {
            let op = self.byte()?;
            if op == b'.' {
                return self.pop();
            }
            let known = self.op_control(op)?
                || self.op_number(op)?
                || self.op_string(op)?
                || self.op_container(op)?
                || self.op_memo(op)?
                || self.op_opaque(op)?;
            if !known {
                return self.fail(format!(
                    "not a pickle of plain data (opcode 0x{op:02x}: persistent ids and \
                     out-of-band buffers are not read)"
                ));
            }
        }
    }

    /// Framing and the stack itself: protocol, frame, mark, pop, dup. False when `op` is none of them.
    fn op_control(&mut self, op: u8) -> Result<bool, PickleError> {
        match op {
            0x80 => {
                let proto = self.byte()?;
                if proto > 5 {
                    return self.fail(format!("pickle protocol {proto} (5 is the newest known)"));
                }
            }
            0x95 => {
                self.take(8)?;
            }
            b'(' => self.marks.push(self.stack.len()),
            b'0' => {
                // After a MARK, POP drops the mark (protocol 0's recursive tuples).
                if self.marks.last() == Some(&self.stack.len()) {
                    self.marks.pop();
                } else {
                    self.pop()?;
                }
            }
            b'1' => {
                self.since_mark()?;
            }
            b'2' => {
                let v = self.top()?.clone();
                self.stack.push(v);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// None, booleans, integers and floats. False when `op` is none of them.
    fn op_number(&mut self, op: u8) -> Result<bool, PickleError> {
        match op {
            b'N' => self.stack.push(Py::None),
            0x88 => self.stack.push(Py::Bool(true)),
            0x89 => self.stack.push(Py::Bool(false)),
            b'J' => {
                let v = self.le(4)? as u32 as i32;
                self.stack.push(Py::Int(i128::from(v)));
            }
            b'K' => {
                let v = self.byte()?;
                self.stack.push(Py::Int(i128::from(v)));
            }
            b'M' => {
                let v = self.le(2)?;
                self.stack.push(Py::Int(i128::from(v)));
            }
            0x8a | 0x8b => {
                let n = if op == 0x8a {
                    usize::from(self.byte()?)
                } else {
                    self.sized(4)?
                };
                let b = self.take(n)?;
                self.stack.push(long(b));
            }
            b'I' | b'L' => {
                let l = self.line()?;
                let s = String::from_utf8_lossy(l);
                let s = s.trim_end_matches('L');
                let v = match s {
                    "00" => Py::Bool(false),
                    "01" => Py::Bool(true),
                    _ => s.parse::<i128>().map_or(Py::Opaque, Py::Int),
                };
                self.stack.push(v);
            }
            b'F' => {
                let l = self.line()?;
                let v = String::from_utf8_lossy(l)
                    .parse::<f64>()
                    .unwrap_or(f64::NAN);
                self.stack.push(Py::Float(v));
            }
            b'G' => {
                let b = self.take(8)?;
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                self.stack.push(Py::Float(f64::from_be_bytes(a)));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Strings and bytes. False when `op` is none of them.
    fn op_string(&mut self, op: u8) -> Result<bool, PickleError> {
        match op {
            0x8c | b'X' | 0x8d => {
                let n = match op {
                    0x8c => usize::from(self.byte()?),
                    b'X' => self.sized(4)?,
                    _ => self.sized(8)?,
                };
                let b = self.take(n)?;
                let v = self.text(b);
                self.stack.push(v);
            }
            b'V' => {
                let l = self.line()?;
                self.stack.push(Py::Str(raw_unicode_escape(l).into()));
            }
            b'S' => {
                let l = self.line()?;
                let inner = l.get(1..l.len().saturating_sub(1)).unwrap_or_default();
                let v = self.text(inner);
                self.stack.push(v);
            }
            b'T' | b'U' | b'B' | b'C' | 0x8e | 0x96 => {
                let n = match op {
                    b'U' | b'C' => usize::from(self.byte()?),
                    b'T' | b'B' => self.sized(4)?,
                    _ => self.sized(8)?,
                };
                let b = self.take(n)?;
                // Python 2 strings (T, U) are text to Python 3 (encoding="ASCII").
                let v = if matches!(op, b'T' | b'U') {
                    self.text(b)
                } else {
                    Py::Bytes(b.into())
                };
                self.stack.push(v);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Lists, tuples, dicts and sets, and what fills them. False when `op` is none of them.
    fn op_container(&mut self, op: u8) -> Result<bool, PickleError> {
        match op {
            b']' => {
                let l = self.list(Vec::new());
                self.stack.push(l);
            }
            b'l' => {
                let items = self.since_mark()?;
                let l = self.list(items);
                self.stack.push(l);
            }
            b')' => self.stack.push(Py::Tuple(Rc::from(Vec::new()), 1)),
            b't' => {
                let items = self.since_mark()?;
                let t = self.tuple(items)?;
                self.stack.push(t);
            }
            0x85..=0x87 => {
                let n = usize::from(op - 0x84);
                if self.stack.len() < n {
                    return self.fail("a malformed pickle (a tuple of missing values)");
                }
                let items = self.stack.split_off(self.stack.len() - n);
                let t = self.tuple(items)?;
                self.stack.push(t);
            }
            b'}' => {
                let d = self.dict();
                self.stack.push(d);
            }
            b'd' => {
                let items = self.since_mark()?;
                let d = self.dict();
                self.stack.push(d);
                self.set_items(items)?;
            }
            b's' => {
                let v = self.pop()?;
                let k = self.pop()?;
                self.set_items(vec![k, v])?;
            }
            b'u' => {
                let items = self.since_mark()?;
                self.set_items(items)?;
            }
            b'a' => {
                let v = self.pop()?;
                self.append(vec![v])?;
            }
            b'e' | 0x90 => {
                let items = self.since_mark()?;
                self.append(items)?;
            }
            0x8f => {
                let l = self.list(Vec::new());
                let Py::List(inner) = l else { unreachable!() };
                self.stack.push(Py::Set(inner));
            }
            0x91 => {
                let items = self.since_mark()?;
                let Py::List(inner) = self.list(items) else {
                    unreachable!()
                };
                self.stack.push(Py::Set(inner));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The memo: PUT and GET in each of their sizes. False when `op` is none of them.
    fn op_memo(&mut self, op: u8) -> Result<bool, PickleError> {
        match op {
            b'p' => {
                let l = self.line()?;
                let i = String::from_utf8_lossy(l)
                    .parse::<usize>()
                    .or_else(|_| self.fail("a bad PUT"))?;
                self.put(i)?;
            }
            b'q' => {
                let i = usize::from(self.byte()?);
                self.put(i)?;
            }
            b'r' => {
                let i = self.sized(4)?;
                self.put(i)?;
            }
            0x94 => {
                let i = self.memo.len();
                self.put(i)?;
            }
            b'g' => {
                let l = self.line()?;
                let i = String::from_utf8_lossy(l)
                    .parse::<usize>()
                    .or_else(|_| self.fail("a bad GET"))?;
                self.get(i)?;
            }
            b'h' => {
                let i = usize::from(self.byte()?);
                self.get(i)?;
            }
            b'j' => {
                let i = self.sized(4)?;
                self.get(i)?;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// What is named or built but never run: globals, calls, object builds, extension
    /// codes; each leaves an opaque value. False when `op` is none of them.
    fn op_opaque(&mut self, op: u8) -> Result<bool, PickleError> {
        match op {
            // A global (class or function) is named, never imported.
            b'c' => {
                self.line()?;
                self.line()?;
                self.stack.push(Py::Opaque);
            }
            0x93 => {
                self.pop()?;
                self.pop()?;
                self.stack.push(Py::Opaque);
            }
            // Calls and object builds are not run: the result is opaque.
            b'R' | 0x81 => {
                self.pop()?;
                self.pop()?;
                self.stack.push(Py::Opaque);
            }
            0x92 => {
                self.pop()?;
                self.pop()?;
                self.pop()?;
                self.stack.push(Py::Opaque);
            }
            b'b' => {
                self.pop()?;
            }
            b'i' => {
                self.line()?;
                self.line()?;
                self.since_mark()?;
                self.stack.push(Py::Opaque);
            }
            b'o' => {
                self.since_mark()?;
                self.stack.push(Py::Opaque);
            }
            0x82 => {
                self.take(1)?;
                self.stack.push(Py::Opaque);
            }
            0x83 => {
                self.take(2)?;
                self.stack.push(Py::Opaque);
            }
            0x84 => {
                self.take(4)?;
                self.stack.push(Py::Opaque);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// Protocol 0's UNICODE: `\uXXXX` and `\UXXXXXXXX` escapes, every other byte a
/// Latin-1 character (Python's raw-unicode-escape).
fn raw_unicode_escape(b: &[u8]) -> String {
    let mut out = String::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let digits = match (b[i], b.get(i + 1)) {
            (b'\\', Some(b'u')) => 4,
            (b'\\', Some(b'U')) => 8,
            _ => 0,
        };
        let code = (digits > 0)
            .then(|| b.get(i + 2..i + 2 + digits))
            .flatten()
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .and_then(char::from_u32);
        match code {
            Some(c) => {
                out.push(c);
                i += 2 + digits;
            }
            None => {
                out.push(char::from(b[i]));
                i += 1;
            }
        }
    }
    out
}

fn same_key(a: &Py, b: &Py) -> bool {
    match (a, b) {
        (Py::Str(x), Py::Str(y)) => x == y,
        (Py::Int(x), Py::Int(y)) => x == y,
        (Py::Bool(x), Py::Bool(y)) => x == y,
        (Py::None, Py::None) => true,
        _ => false,
    }
}

/// Little-endian two's complement, as LONG1 and LONG4 store it.
fn long(b: &[u8]) -> Py {
    if b.is_empty() {
        return Py::Int(0);
    }
    if b.len() > 16 {
        return Py::Opaque;
    }
    let negative = b[b.len() - 1] & 0x80 != 0;
    let mut buf = [if negative { 0xff } else { 0 }; 16];
    buf[..b.len()].copy_from_slice(b);
    Py::Int(i128::from_le_bytes(buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_values_of_protocol_4() {
        // pickle.dumps({"a": [1, -2, 300, 2**64], "b": (True, None, "é")}, protocol=4)
        let bytes = b"\x80\x04\x95/\x00\x00\x00\x00\x00\x00\x00}\x94(\x8c\x01a\x94]\x94(K\x01J\xfe\xff\xff\xffM,\x01\x8a\t\x00\x00\x00\x00\x00\x00\x00\x00\x01e\x8c\x01b\x94\x88N\x8c\x02\xc3\xa9\x94\x87\x94u.";
        let p = read(bytes).unwrap();
        let v = &p.root;
        let a = v.get("a").unwrap().items().unwrap();
        let ints: Vec<i128> = a.iter().map(|x| x.int().unwrap()).collect();
        assert_eq!(ints, [1, -2, 300, 1 << 64]);
        let b = v.get("b").unwrap().items().unwrap();
        assert!(matches!(b[0], Py::Bool(true)));
        assert!(matches!(b[1], Py::None));
        assert_eq!(b[2].str(), Some("é"));
    }

    #[test]
    fn shared_objects_stay_shared_and_globals_are_not_run() {
        // x = [1]; pickle.dumps([x, x, x], protocol=2)
        let bytes = b"\x80\x02]q\x00(]q\x01K\x01ah\x01h\x01e.";
        let p = read(bytes).unwrap();
        let items = p.root.items().unwrap();
        assert_eq!(items.len(), 3);
        let (Py::List(a), Py::List(b)) = (&items[0], &items[2]) else {
            panic!("{items:?}")
        };
        assert!(Rc::ptr_eq(a, b));
        // pickle.dumps(os.system, protocol=0): a global, read as opaque.
        let p = read(b"cposix\nsystem\np0\n.").unwrap();
        assert!(matches!(p.root, Py::Opaque));
        // A REDUCE is never called: `os.system("x")`.
        let p = read(b"cposix\nsystem\n(S'x'\ntR.").unwrap();
        assert!(matches!(p.root, Py::Opaque));
        // l = []; l.append(l): a list holding itself reads, and is freed.
        let p = read(b"\x80\x04]\x94h\x00a.").unwrap();
        let Py::List(l) = &p.root else { panic!() };
        let weak = Rc::downgrade(l);
        drop(p);
        assert!(weak.upgrade().is_none(), "the cycle was broken");
    }

    #[test]
    fn protocol_0_text_is_raw_unicode_escape() {
        // pickle.dumps(["é\\x", "\\u20ac"], protocol=0)
        let p = read(b"(lp0\nV\xe9\\u005cx\np1\naV\\u20ac\np2\na.").unwrap();
        let items = p.root.items().unwrap();
        assert_eq!(items[0].str(), Some("é\\x"));
        assert_eq!(items[1].str(), Some("€"));
    }

    #[test]
    fn deeply_nested_tuples_are_refused_not_overflowed() {
        let mut bytes = b"\x80\x02N".to_vec();
        bytes.extend(std::iter::repeat_n(0x85u8, 100_000));
        bytes.push(b'.');
        assert!(read(&bytes).unwrap_err().what.contains("nested"));
        let mut ok = b"\x80\x02N".to_vec();
        ok.extend(std::iter::repeat_n(0x85u8, 999));
        ok.push(b'.');
        assert!(read(&ok).is_ok());
    }

    #[test]
    fn truncated_and_malformed_say_so() {
        let e = read(b"\x80\x04}\x94").unwrap_err();
        assert!(e.truncated(), "{e}");
        assert!(read(b"").unwrap_err().truncated());
        assert!(!read(b"a").unwrap_err().truncated());
        assert!(read(b"\x80\x09.").unwrap_err().what.contains("protocol 9"));
        assert!(read(b"h\x05.").unwrap_err().what.contains("memo 5"));
    }
}

//! One description per record: a CSV record's columns are declared once, in a
//! `column_table!` table next to its struct, and everything else is made from
//! that table: the column list (the CSV header), the cells a writer writes, the reader that
//! fills a record from a row, and the typed values InfluxDB gets ([`Columns::visit`]: tags,
//! fields with their types, the time column left out). Adding a column is one line in the
//! table; a renamed struct field fails to build there.
//!
//! Why a `macro_rules!` table and not serde or a derive: the CSV form of a record is not its
//! JSON form (`FileRecord` serialises `target_index` and every corrupt block to JSON, but
//! `files.csv` has neither and has `first_corrupt_offset` instead; `mbps` has 3 decimals in
//! the CSV and full precision in InfluxDB; `probe.csv` numbers are shortest round-trip and
//! are written on the probe's hot path), so serde's names would need a second, CSV-only
//! struct per record — the duplication this removes. A derive would need a proc-macro crate
//! for five records. The table says per column its name, its role (InfluxDB tag, field, or
//! the point's time) and two expressions (value out, cell in) and expands to straight-line
//! code, as fast as the hand-written writers it replaces.

use crate::error::{RecordError, Result};
use std::path::Path;

/// What a column is to InfluxDB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A tag (its value is [`Value::Text`]).
    Tag,
    /// A field, typed as its [`Value`].
    Field,
    /// The point's time: a CSV column, not a field (the point carries it as its timestamp).
    Time,
}

/// One cell's value as its record gives it: the CSV writer formats it, InfluxDB gets it as a
/// field of the matching type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    /// Text (an InfluxDB string field, or a tag).
    Text(&'a str),
    /// A signed whole number (InfluxDB integer, `i`).
    Int(i64),
    /// An unsigned whole number, written in full in the CSV (InfluxDB integer, `i`, as `i64`).
    Count(u64),
    /// A number in Rust's shortest round-trip form (InfluxDB float; left out when not finite).
    Float(f64),
    /// A number with this many decimals in the CSV (InfluxDB float in full precision; left
    /// out when not finite).
    Fixed(f64, usize),
    /// `true`/`false`.
    Bool(bool),
    /// Nothing: an empty cell, no field.
    Absent,
}

impl Value<'_> {
    /// Appends the CSV form of the value to `out`, unquoted (the caller quotes text).
    pub fn write_csv(&self, out: &mut String) {
        use std::fmt::Write as _;
        let _ = match *self {
            Value::Text(s) => {
                out.push_str(s);
                Ok(())
            }
            Value::Int(n) => write!(out, "{n}"),
            Value::Count(n) => write!(out, "{n}"),
            Value::Float(v) => write!(out, "{v}"),
            Value::Fixed(v, digits) => write!(out, "{v:.digits$}"),
            Value::Bool(b) => {
                out.push_str(if b { "true" } else { "false" });
                Ok(())
            }
            Value::Absent => Ok(()),
        };
    }

    /// [`Value::Float`] of `v`, or [`Value::Absent`] when `v` is None.
    pub fn float(v: Option<f64>) -> Value<'static> {
        v.map_or(Value::Absent, Value::Float)
    }

    /// [`Value::Float`] of `v`, or [`Value::Absent`] when `v` is NaN (a bin without samples).
    pub fn unless_nan(v: f64) -> Value<'static> {
        if v.is_nan() {
            Value::Absent
        } else {
            Value::Float(v)
        }
    }
}

/// A record with a column table (`column_table!`).
pub trait Columns {
    /// The column names, in file order.
    const NAMES: &'static [&'static str];
    /// The columns a file must have to be read as these records.
    const REQUIRED: &'static [&'static str];

    /// Calls `f` with each column's name, role and value, in file order; `None` (a part of
    /// a record that is not there, e.g. a file without probe figures) gives every column
    /// [`Value::Absent`].
    fn visit<'a>(this: Option<&'a Self>, f: &mut impl FnMut(&'static str, Role, Value<'a>));

    /// The record's CSV cells, in file order (text quoted as CSV needs).
    fn csv_cells(this: Option<&Self>) -> Vec<String> {
        let mut cells = Vec::with_capacity(Self::NAMES.len());
        Self::visit(this, &mut |_, _, v| {
            let mut s = String::new();
            v.write_csv(&mut s);
            cells.push(s);
        });
        cells
    }

    /// Appends the record as CSV cells to `out`, each preceded by a comma unless it is the
    /// first of the line (`first`); text is written as is (for files that never quote).
    fn write_csv_plain(this: Option<&Self>, out: &mut String, mut first: bool) {
        Self::visit(this, &mut |_, _, v| {
            if !std::mem::take(&mut first) {
                out.push(',');
            }
            v.write_csv(out);
        });
    }
}

/// A record with a column table as a trait object: how a list of files of different records
/// ([`crate::run_files::RUN_FILES`]) hands their rows on.
pub trait ColumnRow {
    /// Calls `f` with each column's name, role and value, in file order ([`Columns::visit`]).
    fn visit_row<'a>(&'a self, f: &mut dyn FnMut(&'static str, Role, Value<'a>));
}

impl<R: Columns> ColumnRow for R {
    fn visit_row<'a>(&'a self, f: &mut dyn FnMut(&'static str, Role, Value<'a>)) {
        R::visit(Some(self), &mut |name, role, v| f(name, role, v));
    }
}

/// Fills a record from the cells of a row (the reading half of a column table).
pub(crate) trait ReadCells {
    /// Sets each column `cell(k, name)` gives a cell for (`k`: the column's position in
    /// [`Columns::NAMES`]); columns without a cell keep their value.
    fn read_cells<'c>(
        &mut self,
        cell: impl FnMut(usize, &'static str) -> Option<Cell<'c>>,
    ) -> Result<()>;
}

/// One CSV cell being read: its bytes and where they are, for errors naming file, line and
/// column.
#[derive(Clone, Copy)]
pub(crate) struct Cell<'a> {
    pub(crate) path: &'a Path,
    /// 1-based file line.
    pub(crate) line: u64,
    pub(crate) name: &'static str,
    pub(crate) raw: &'a [u8],
}

impl<'a> Cell<'a> {
    /// The error for this cell.
    pub(crate) fn bad(&self, message: &str) -> RecordError {
        crate::csvio::bad_value(self.path, self.line, self.name, self.raw, message)
    }

    /// The trimmed text.
    pub(crate) fn text(&self) -> Result<&'a str> {
        std::str::from_utf8(self.raw)
            .map(str::trim)
            .map_err(|_| self.bad("not UTF-8"))
    }

    /// A whole number.
    pub(crate) fn int<T: std::str::FromStr + TryFrom<i64>>(&self) -> Result<T> {
        self.opt_int()?
            .ok_or_else(|| self.bad("expected a whole number"))
    }

    /// A whole number; an empty cell is None.
    pub(crate) fn opt_int<T: std::str::FromStr + TryFrom<i64>>(&self) -> Result<Option<T>> {
        let fast = fast_int(self.raw).and_then(|x| T::try_from(x).ok());
        self.parsed(fast, "expected a whole number")
    }

    /// A number; an empty cell is None (a channel not measured).
    pub(crate) fn opt_float(&self) -> Result<Option<f64>> {
        self.parsed(fast_decimal(self.raw), "expected a number")
    }

    /// `fast` (what a fast parser made of the cell) or else the trimmed text parsed; an
    /// empty cell is None, text that does not parse the error `expected`.
    fn parsed<T: std::str::FromStr>(&self, fast: Option<T>, expected: &str) -> Result<Option<T>> {
        if fast.is_some() {
            return Ok(fast);
        }
        match self.text()? {
            "" => Ok(None),
            s => s.parse::<T>().map(Some).map_err(|_| self.bad(expected)),
        }
    }

    /// `true`/`false`; an empty cell is None.
    pub(crate) fn opt_bool(&self) -> Result<Option<bool>> {
        match self.text()? {
            "" => Ok(None),
            "true" => Ok(Some(true)),
            "false" => Ok(Some(false)),
            _ => Err(self.bad("expected true or false")),
        }
    }
}

/// Powers of ten exactly representable as f64.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Plain decimals (`-12.345`, at most 15 significant digits, no exponent) parsed exactly:
/// the digits form an integer below 2⁵³ and one division by an exact power of ten is
/// correctly rounded (Clinger's fast path). None for anything else (the caller falls back
/// to the standard parser).
pub(crate) fn fast_decimal(v: &[u8]) -> Option<f64> {
    let (neg, digits) = match v.first()? {
        b'-' => (true, &v[1..]),
        _ => (false, v),
    };
    let (mut mant, mut n, mut frac, mut dot) = (0u64, 0usize, 0usize, false);
    for &b in digits {
        match b {
            b'0'..=b'9' => {
                mant = mant * 10 + u64::from(b - b'0');
                n += 1;
                frac += usize::from(dot);
            }
            b'.' if !dot => dot = true,
            _ => return None,
        }
    }
    if n == 0 || n > 15 {
        return None;
    }
    let x = mant as f64 / POW10[frac];
    Some(if neg { -x } else { x })
}

/// Plain whole numbers that fit an i64.
pub(crate) fn fast_int(v: &[u8]) -> Option<i64> {
    let (neg, digits) = match v.first()? {
        b'-' => (true, &v[1..]),
        _ => (false, v),
    };
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    let mut x = 0i64;
    for &b in digits {
        if !b.is_ascii_digit() {
            return None;
        }
        x = x.checked_mul(10)?.checked_add(i64::from(b - b'0'))?;
    }
    Some(if neg { -x } else { x })
}

/// `column_table!` declares a record's column table: `$vis const NAME for Type { rows }`, one row a column,
/// in file order:
///
/// ```text
/// "name" (Role[, required]): |r| value-of(r), |r, c| r.field = parse(c)?;
/// ```
///
/// `Role` is a [`Role`] variant; `required` makes a file without the column unreadable;
/// the first expression gives the column's [`Value`] of `r: &Type`, the second sets
/// `r: &mut Type` from the cell `c` ([`Cell`]). Expands to `NAME` (the column names) and
/// the [`Columns`] and `ReadCells` impls of `Type`.
macro_rules! column_table {
    (
        $(#[$doc:meta])*
        $vis:vis const $names:ident for $ty:ty {
            $(
                $name:literal ($role:ident $(, $req:ident)?):
                    |$g:ident| $get:expr, |$s:ident, $c:ident| $set:expr;
            )*
        }
    ) => {
        $(#[$doc])*
        $vis const $names: &[&str] = &[$($name),*];

        impl $crate::columns::Columns for $ty {
            const NAMES: &'static [&'static str] = $names;
            const REQUIRED: &'static [&'static str] =
                &[$($($crate::columns::column_table!(@$req $name),)?)*];

            #[inline]
            fn visit<'a>(
                this: Option<&'a Self>,
                f: &mut impl FnMut(&'static str, $crate::columns::Role, $crate::columns::Value<'a>),
            ) {
                $(
                    f(
                        $name,
                        $crate::columns::Role::$role,
                        match this {
                            Some($g) => $get,
                            None => $crate::columns::Value::Absent,
                        },
                    );
                )*
            }
        }

        impl $crate::columns::ReadCells for $ty {
            #[inline]
            fn read_cells<'c>(
                &mut self,
                mut cell: impl FnMut(usize, &'static str) -> Option<$crate::columns::Cell<'c>>,
            ) -> $crate::error::Result<()> {
                let mut k = 0usize;
                $(
                    if let Some($c) = cell(k, $name) {
                        let $s = &mut *self;
                        $set;
                    }
                    k += 1;
                )*
                let _ = k;
                Ok(())
            }
        }
    };
    (@required $name:literal) => {
        $name
    };
}
pub(crate) use column_table;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_written_as_the_csv_files_have_them() {
        let cell = |v: Value<'_>| {
            let mut s = String::new();
            v.write_csv(&mut s);
            s
        };
        assert_eq!(cell(Value::Text("a,b")), "a,b");
        assert_eq!(cell(Value::Int(-5)), "-5");
        assert_eq!(cell(Value::Count(u64::MAX)), "18446744073709551615");
        assert_eq!(cell(Value::Float(0.1 + 0.2)), "0.30000000000000004");
        assert_eq!(cell(Value::Float(40.0)), "40");
        assert_eq!(cell(Value::Fixed(417.2105, 3)), "417.211");
        assert_eq!(cell(Value::Fixed(2.5, 6)), "2.500000");
        assert_eq!(cell(Value::Bool(false)), "false");
        assert_eq!(cell(Value::Absent), "");
        assert_eq!(cell(Value::unless_nan(f64::NAN)), "");
        assert_eq!(cell(Value::float(None)), "");
    }

    #[test]
    fn fast_number_parsing_is_exact_or_declines() {
        for t in [
            "0",
            "4.99921875",
            "-12.5",
            "123456.789",
            "0.00012",
            "8.2149658203125",
        ] {
            assert_eq!(
                fast_decimal(t.as_bytes()),
                Some(t.parse::<f64>().unwrap()),
                "{t}"
            );
        }
        for t in ["1e3", "", "-", "1.2.3", "nan", "1234567890123456.7", " 1"] {
            assert_eq!(fast_decimal(t.as_bytes()), None, "{t}");
        }
        assert_eq!(
            fast_int(b"1795281402842177466"),
            Some(1_795_281_402_842_177_466)
        );
        assert_eq!(fast_int(b"-5"), Some(-5));
        assert_eq!(fast_int(b"5x"), None);
    }

    #[test]
    fn a_cell_parses_as_the_readers_did_and_names_itself_when_bad() {
        let cell = |raw: &'static str| Cell {
            path: Path::new("x.csv"),
            line: 7,
            name: "bytes",
            raw: raw.as_bytes(),
        };
        assert_eq!(cell(" 12 ").int::<u64>().unwrap(), 12);
        assert_eq!(cell("").opt_int::<u64>().unwrap(), None);
        assert_eq!(cell("18446744073709551615").int::<u64>().unwrap(), u64::MAX);
        assert_eq!(cell("1e-3").opt_float().unwrap(), Some(1e-3));
        assert_eq!(cell("true").opt_bool().unwrap(), Some(true));
        let e = cell("-1").int::<u64>().unwrap_err().to_string();
        assert!(e.contains("x.csv: line 7, column `bytes`"), "{e}");
        assert!(e.contains("whole number"), "{e}");
        let e = cell("").int::<u64>().unwrap_err().to_string();
        assert!(e.contains("whole number"), "{e}");
        assert!(cell("yes").opt_bool().is_err());
        assert!(cell("2.x").opt_float().is_err());
    }
}

//! `fathom export --format csv` (the default): the rows of [`rows`](super::rows) under
//! a header line, written by the `csv` crate so a field holding a comma, a quote, a line
//! feed or a carriage return is quoted (RFC 4180) and every other field is left bare.

use super::rows::{COLUMNS, Row, rows};
use super::seam::{Format, Source};
use crate::error::{Error, Result};
use serde_json::Value;

pub struct Csv;

impl Format for Csv {
    fn name(&self) -> &'static str {
        "csv"
    }

    fn about(&self) -> &'static str {
        "A header line, then one line per row"
    }

    fn render(&self, run: &Source) -> Result<String> {
        write(&rows(run)?)
    }
}

/// The header and `rows` as CSV text.
fn write(rows: &[Row]) -> Result<String> {
    let broke = |e: csv::Error| Error::failed(format!("writing CSV: {e}"));
    let mut out = csv::Writer::from_writer(Vec::new());
    out.write_record(COLUMNS).map_err(broke)?;
    for r in rows {
        out.write_record(r.iter().map(cell)).map_err(broke)?;
    }
    let bytes = out.into_inner().map_err(|e| Error::failed(format!("writing CSV: {e}")))?;
    Ok(String::from_utf8(bytes).expect("CSV of UTF-8 fields is UTF-8"))
}

/// A cell's text before quoting: numbers as JSON writes them, and nothing for a missing
/// value.
fn cell(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(workload: &str) -> Row {
        let mut r: Row = vec![7.into(), workload.into(), "p".into(), Value::Null, true.into(), 1.0.into()];
        r.extend(["randread".into(), "4k".into(), 1.into(), 1.into(), "read".into(), "iops".into()]);
        r.extend([10u64, 40960].map(Value::from));
        r.extend([Value::from(10.0), Value::Null, 0.04096.into(), Value::Null]);
        r.extend([12.5, 11.0, 30.25, 35.5, 41.0].map(Value::from));
        r.extend([Value::Null, Value::Null, Value::Null]);
        r
    }

    #[test]
    fn fields_with_a_separator_quote_or_line_break_are_quoted_and_the_rest_bare() {
        let text =
            write(&[row("plain"), row("cr\rhere"), row("lf\nhere"), row("a \"quote\""), row("a,comma")]).unwrap();
        let lines: Vec<&str> = text.split('\n').collect();
        assert_eq!(lines[0], COLUMNS.join(","));
        assert_eq!(
            lines[1],
            "7,plain,p,,true,1.0,randread,4k,1,1,read,iops,10,40960,10.0,,0.04096,,12.5,11.0,30.25,35.5,41.0,,,"
        );
        assert!(text.contains(",\"cr\rhere\",p,"), "{text:?}");
        assert!(text.contains(",\"lf\nhere\",p,"), "{text:?}");
        assert!(text.contains(",\"a \"\"quote\"\"\",p,"), "{text:?}");
        assert!(text.contains(",\"a,comma\",p,"), "{text:?}");
        assert!(text.ends_with("41.0,,,\n"), "{text:?}");
        let names: Vec<String> =
            csv::Reader::from_reader(text.as_bytes()).records().map(|r| r.unwrap()[1].to_string()).collect();
        assert_eq!(names, ["plain", "cr\rhere", "lf\nhere", "a \"quote\"", "a,comma"]);
    }
}

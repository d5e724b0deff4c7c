//! `fathom export --format json`: the rows of [`rows`](super::rows) as an array of
//! objects keyed by column, pretty-printed.

use super::rows::{COLUMNS, rows};
use super::seam::{Format, Source};
use crate::error::Result;
use serde_json::Value;

pub struct Json;

impl Format for Json {
    fn name(&self) -> &'static str {
        "json"
    }

    fn about(&self) -> &'static str {
        "An array of objects, one per row, keyed by column"
    }

    fn render(&self, run: &Source) -> Result<String> {
        let objects: Vec<Value> = rows(run)?
            .into_iter()
            .map(|r| Value::Object(COLUMNS.iter().map(|c| c.to_string()).zip(r).collect()))
            .collect();
        Ok(serde_json::to_string_pretty(&objects).expect("rows serialize") + "\n")
    }
}

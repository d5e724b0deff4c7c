//! One table model for every section a person reads: a section builds its [`Table`]
//! once, and the terminal ([`text`]) and the report's page ([`html`]) render that same
//! table, with the same columns, units and precision. Each renderer supplies only its
//! syntax, as hyperfine's export formats do.

pub mod html;
pub mod model;
pub mod text;

pub use model::{Cell, Column, Mark, Row, Table, from_rows};
pub use text::plain;

//! A workload's tables spread over its throwaway server's table disks (`table_targets`),
//! as the field notes lay a database's data over several disks: fathom's own DDL, each
//! statement that makes a table or one of its indexes given the clause that puts it on
//! its table's disk (a PostgreSQL tablespace, a MariaDB `DATA DIRECTORY`).
//!
//! The tables are dealt round-robin, largest expected first: the two largest land on
//! different disks whenever there are two, and the same scenario always lays its tables
//! out alike. An index goes with its table: a disk's IO is then the IO of the tables
//! the layout names, and the largest table's index does not crowd another disk's.

use std::path::PathBuf;

/// What a statement of fathom's DDL makes, named by its table.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Makes<'a> {
    /// `CREATE TABLE t`.
    Table(&'a str),
    /// `ALTER TABLE t ADD PRIMARY KEY`: the key's index.
    Key(&'a str),
    /// `CREATE [UNIQUE] INDEX [name] ON t`.
    Index(&'a str),
}

/// What the statement beginning on `line` makes, if it makes a table or an index.
fn makes(line: &str) -> Option<Makes<'_>> {
    let words: Vec<&str> = line.split_whitespace().collect();
    fn name<'a>(word: &&'a str) -> &'a str {
        word.trim_end_matches('(')
    }
    match words.as_slice() {
        ["CREATE", "TABLE", t, ..] => Some(Makes::Table(name(t))),
        ["ALTER", "TABLE", t, "ADD", "PRIMARY", "KEY", ..] => Some(Makes::Key(name(t))),
        ["CREATE", "INDEX" | "UNIQUE", ..] => {
            let on = words.iter().position(|w| *w == "ON")?;
            words.get(on + 1).map(|t| Makes::Index(name(t)))
        }
        _ => None,
    }
}

/// The place (an index into the table disks) of each of `by_size`'s tables, largest
/// expected first, dealt round-robin over `places` disks.
fn deal<'a>(by_size: &[&'a str], places: usize) -> Vec<(&'a str, usize)> {
    by_size.iter().enumerate().map(|(i, t)| (*t, i % places.max(1))).collect()
}

/// `sql`, fathom's DDL (statements that end their line with `;`, `--` comments between),
/// with each statement that makes a table or an index given the clause `clause` says for
/// what it makes and its table's place, before its `;`.
fn placed(sql: &str, by_size: &[&str], places: usize, clause: &dyn Fn(Makes, usize) -> String) -> String {
    let dealt = deal(by_size, places);
    let place = |m: Makes| {
        let (Makes::Table(t) | Makes::Key(t) | Makes::Index(t)) = m;
        dealt.iter().find(|(table, _)| *table == t).map(|(_, p)| *p)
    };
    let mut out = String::with_capacity(sql.len());
    let mut open: Option<Makes> = None;
    for line in sql.lines() {
        let comment = line.trim_start().starts_with("--");
        if open.is_none() && !comment {
            open = makes(line);
        }
        match line.trim_end().strip_suffix(';') {
            Some(body) if !comment => {
                out.push_str(body);
                if let Some((m, p)) = open.take().and_then(|m| Some((m, place(m)?))) {
                    out.push_str(&clause(m, p));
                }
                out.push(';');
            }
            _ => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

/// `sql` with its tables and their indexes on PostgreSQL's `tablespaces`, one per table
/// disk; unchanged without any.
pub fn postgres(sql: &str, by_size: &[&str], tablespaces: &[String]) -> String {
    if tablespaces.is_empty() {
        return sql.to_string();
    }
    placed(sql, by_size, tablespaces.len(), &|m, p| match m {
        Makes::Table(_) | Makes::Index(_) => format!(" TABLESPACE {}", tablespaces[p]),
        Makes::Key(_) => format!(" USING INDEX TABLESPACE {}", tablespaces[p]),
    })
}

/// `sql` with its InnoDB tables in MariaDB's table `dirs` (`DATA DIRECTORY`, each
/// table's file with its indexes); unchanged without any.
pub fn mariadb(sql: &str, by_size: &[&str], dirs: &[PathBuf]) -> String {
    if dirs.is_empty() {
        return sql.to_string();
    }
    placed(sql, by_size, dirs.len(), &|m, p| match m {
        Makes::Table(_) => format!(" DATA DIRECTORY = '{}'", dirs[p].display().to_string().replace('\'', "''")),
        // an InnoDB index lives in its table's file
        Makes::Key(_) | Makes::Index(_) => String::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_dealt_round_robin_largest_first_so_the_largest_two_part() {
        let by_size = ["stock", "customer", "order_line", "item", "history"];
        let dealt = deal(&by_size, 2);
        assert_eq!(dealt, [("stock", 0), ("customer", 1), ("order_line", 0), ("item", 1), ("history", 0)]);
        assert_eq!(deal(&by_size, 3).iter().map(|d| d.1).collect::<Vec<_>>(), [0, 1, 2, 0, 1]);
        assert!(deal(&by_size, 1).iter().all(|d| d.1 == 0));
    }

    #[test]
    fn each_table_and_its_indexes_go_to_its_tablespace() {
        let sql = "-- two tables\nCREATE TABLE big (\n    a integer\n) WITH (fillfactor = 10);\n\
                   CREATE TABLE small (b integer);\nCREATE TABLE other (c integer);\n\
                   ALTER TABLE big ADD PRIMARY KEY (a);\nCREATE UNIQUE INDEX small_i2 ON small (b);\n\
                   CREATE INDEX ON big (a);\nALTER TABLE small ADD FOREIGN KEY (b) REFERENCES big;\n";
        let spaces = ["t1".to_string(), "t2".to_string()];
        let placed = postgres(sql, &["big", "small"], &spaces);
        let want = "-- two tables\nCREATE TABLE big (\n    a integer\n) WITH (fillfactor = 10) TABLESPACE t1;\n\
                    CREATE TABLE small (b integer) TABLESPACE t2;\nCREATE TABLE other (c integer);\n\
                    ALTER TABLE big ADD PRIMARY KEY (a) USING INDEX TABLESPACE t1;\n\
                    CREATE UNIQUE INDEX small_i2 ON small (b) TABLESPACE t2;\nCREATE INDEX ON big (a) TABLESPACE t1;\n\
                    ALTER TABLE small ADD FOREIGN KEY (b) REFERENCES big;\n";
        assert_eq!(placed, want);
        assert_eq!(postgres(sql, &["big"], &[]), sql);
    }

    #[test]
    fn an_innodb_table_goes_to_its_data_directory_its_keys_with_it() {
        let sql = "CREATE TABLE big (\n    a integer,\n    PRIMARY KEY (a)\n) ENGINE = InnoDB;\n\
                   CREATE TABLE small (b integer) ENGINE = InnoDB;\n";
        let dirs = [PathBuf::from("/d/1"), PathBuf::from("/d/it's")];
        let placed = mariadb(sql, &["big", "small"], &dirs);
        let want = "CREATE TABLE big (\n    a integer,\n    PRIMARY KEY (a)\n) ENGINE = InnoDB DATA DIRECTORY = '/d/1';\n\
                    CREATE TABLE small (b integer) ENGINE = InnoDB DATA DIRECTORY = '/d/it''s';\n";
        assert_eq!(placed, want);
    }
}

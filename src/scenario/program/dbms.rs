//! `dbms:`, the database a database program runs against: PostgreSQL (the default) or
//! MariaDB (MySQL reached by `dsn` too), and what a scenario's keys mean on each.

use super::seam::Keys;
use crate::error::Result;
use serde::Serialize;

/// A database management system fathom can run a workload against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dbms {
    #[default]
    Postgresql,
    Mariadb,
}

impl Dbms {
    /// What `dbms:` takes, each name with its aliases.
    const NAMES: [(&'static str, Dbms); 4] = [
        ("postgresql", Dbms::Postgresql),
        ("postgres", Dbms::Postgresql),
        ("mariadb", Dbms::Mariadb),
        ("mysql", Dbms::Mariadb),
    ];

    /// Its name in messages.
    pub fn label(self) -> &'static str {
        match self {
            Dbms::Postgresql => "PostgreSQL",
            Dbms::Mariadb => "MariaDB",
        }
    }

    /// The memory its server caches pages in by default (PostgreSQL's `shared_buffers`,
    /// InnoDB's buffer pool), and the setting that changes it.
    pub fn cache(self) -> (&'static str, u64) {
        match self {
            Dbms::Postgresql => ("shared_buffers", 128 << 20),
            Dbms::Mariadb => ("innodb_buffer_pool_size", 128 << 20),
        }
    }
    /// The memory the throwaway server of `settings` caches pages in, in bytes (its
    /// setting, else its default); `None` for a server given by `dsn` (its setting is its
    /// own) or a value fathom cannot read.
    pub fn cache_bytes(self, dsn: &Option<String>, settings: &[(String, String)]) -> Option<u64> {
        let (key, default) = self.cache();
        match (dsn, settings.iter().find(|(k, _)| k == key)) {
            (Some(_), _) => None,
            (None, None) => Some(default),
            (None, Some((_, v))) => self.size(v),
        }
    }

    /// A memory setting of its server in bytes, in the units the server takes:
    /// PostgreSQL's `1GB`, `512MB`, `64kB` or a number of 8 kB pages; MariaDB's `1G`,
    /// `512M` (either case) or bytes.
    pub fn size(self, text: &str) -> Option<u64> {
        let t = text.trim();
        let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let n: u64 = t[..split].parse().ok()?;
        let unit = t[split..].trim();
        let units: &[(&str, u64)] = match self {
            Dbms::Postgresql => {
                &[("", 8 << 10), ("B", 1), ("kB", 1 << 10), ("MB", 1 << 20), ("GB", 1 << 30), ("TB", 1 << 40)]
            }
            Dbms::Mariadb => &[("", 1), ("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30), ("T", 1 << 40)],
        };
        let same = |name: &str| match self {
            Dbms::Postgresql => name == unit,
            Dbms::Mariadb => name.eq_ignore_ascii_case(unit),
        };
        units.iter().find(|(name, _)| same(name)).map(|(_, bytes)| n * bytes)
    }
}

/// The workload's `dbms` key: PostgreSQL unless it says otherwise.
pub fn dbms(keys: &Keys) -> Result<Dbms> {
    let (name, at) = keys.line("dbms")?;
    let Some(name) = name.filter(|n| !n.trim().is_empty()) else { return Ok(Dbms::default()) };
    Dbms::NAMES.iter().find(|(n, _)| n.eq_ignore_ascii_case(name.trim())).map(|(_, d)| *d).ok_or_else(|| {
        keys.fail(
            &at,
            &format!("`{name}` is not a database fathom runs: postgresql (the default) or mariadb (also mysql)"),
        )
    })
}

/// A MariaDB or MySQL server's `dsn`, `mysql://USER@HOST:PORT/DATABASE`.
#[derive(Debug, Clone, PartialEq)]
pub struct MysqlDsn {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub database: String,
}

impl MysqlDsn {
    /// Port 3306 and database `sbtest` unless given. A password in it is refused (and
    /// not repeated): it comes from `MYSQL_PWD` or the user's option file (`~/.my.cnf`),
    /// as for the `mariadb` client, since the scenario is stored with the run.
    pub fn parse(dsn: &str) -> std::result::Result<MysqlDsn, String> {
        let expected = "expected mysql://USER@HOST[:PORT][/DATABASE]";
        let rest = dsn.strip_prefix("mysql://").or_else(|| dsn.strip_prefix("mariadb://")).ok_or(expected)?;
        let (user, rest) = rest.split_once('@').ok_or(expected)?;
        if user.contains(':') {
            return Err(
                "holds a password: give it in MYSQL_PWD or ~/.my.cnf (fathom stores the scenario with the run)".into(),
            );
        }
        let (server, database) = rest.split_once('/').unwrap_or((rest, ""));
        let (host, port) = match server.rsplit_once(':') {
            Some((host, port)) => (host, port.parse().map_err(|_| format!("port `{port}`: {expected}"))?),
            None => (server, 3306),
        };
        let word = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
        let database = if database.is_empty() { "sbtest" } else { database };
        if !word(user) || !word(host) || !word(database) {
            return Err(format!("{expected}, each part letters, digits, `_`, `.` or `-`"));
        }
        Ok(MysqlDsn { host: host.into(), port, user: user.into(), database: database.into() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mysql_dsn_names_its_server_and_never_a_password() {
        let c = MysqlDsn::parse("mysql://bench@db.example:3307/shop").unwrap();
        assert_eq!(
            (c.host.as_str(), c.port, c.user.as_str(), c.database.as_str()),
            ("db.example", 3307, "bench", "shop")
        );
        assert_eq!(MysqlDsn::parse("mariadb://bench@10.0.0.2").unwrap().port, 3306);
        assert_eq!(MysqlDsn::parse("mysql://bench@db").unwrap().database, "sbtest");
        assert!(MysqlDsn::parse("mysql://bench:hunter2@db").unwrap_err().contains("MYSQL_PWD"));
        assert!(!MysqlDsn::parse("mysql://bench:hunter2@db").unwrap_err().contains("hunter2"));
        assert!(MysqlDsn::parse("postgresql://x@y").is_err());
        assert!(MysqlDsn::parse("mysql://bench@db:port").unwrap_err().contains("port"));
        assert!(MysqlDsn::parse("mysql://be;nch@db").is_err());
    }

    #[test]
    fn sizes_in_each_servers_units() {
        let (pg, maria) = (Dbms::Postgresql, Dbms::Mariadb);
        assert_eq!(pg.size("1GB"), Some(1 << 30));
        assert_eq!(pg.size("128MB"), Some(128 << 20));
        assert_eq!(pg.size("16384"), Some(128 << 20));
        assert_eq!(pg.size("1gb"), None);
        assert_eq!(pg.size("lots"), None);
        assert_eq!(maria.size("1G"), Some(1 << 30));
        assert_eq!(maria.size("512m"), Some(512 << 20));
        assert_eq!(maria.size("134217728"), Some(128 << 20));
        assert_eq!(maria.size("lots"), None);
    }
}

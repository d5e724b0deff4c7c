//! TPC-C's figures as HammerDB computes them, from the database's own counters read
//! after the ramp and at the end: NOPM is the new orders (the sum of the districts'
//! D_NEXT_O_ID) per minute, TPM the transactions PostgreSQL counted (pg_stat_database's
//! commits and rollbacks) per minute. Beside them, what pgbench's transaction log
//! counted over the same window, the mix it achieved, and the consistency conditions.

use crate::drivers::pgbench::log::Counts;
use crate::drivers::postgres;
use crate::error::{Error, Result};
use crate::store::ObservationRow;
use hdrhistogram::Histogram;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// The database's counters at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Reading {
    /// The sum of the districts' next order ids: one more per new order committed.
    pub next_o_id: u64,
    /// Commits and rollbacks of the database (pg_stat_database).
    pub xacts: u64,
    pub rollbacks: u64,
}

/// Reads the counters of `dsn`'s database.
pub fn read(dsn: &str, stop: &AtomicBool) -> Result<Reading> {
    let sql = "SELECT (SELECT sum(d_next_o_id) FROM district) || ' ' || xact_commit + xact_rollback || ' ' || \
               xact_rollback FROM pg_stat_database WHERE datname = current_database()";
    Reading::parse(&postgres::ask(dsn, sql, "reading the TPC-C counters", stop)?)
}

impl Reading {
    /// The counters as a database says them: next order ids, transactions, rollbacks.
    pub fn parse(row: &str) -> Result<Reading> {
        let f: Vec<u64> = row.split_whitespace().filter_map(|v| v.parse().ok()).collect();
        match f[..] {
            [next_o_id, xacts, rollbacks] => Ok(Reading { next_o_id, xacts, rollbacks }),
            _ => Err(Error::failed(format!("reading the TPC-C counters gave `{row}`"))),
        }
    }
}

/// Waits (up to 5 s) until no other session is connected to `dsn`'s database: a
/// session adds its counts to pg_stat_database at most once a second, and all of them
/// as it ends.
pub fn settle(dsn: &str, stop: &AtomicBool) {
    let sql = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()";
    let until = Instant::now() + Duration::from_secs(5);
    let others = || postgres::ask(dsn, sql, "counting the sessions still connected", stop);
    while Instant::now() < until && others().is_ok_and(|n| n != "0") {
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The consistency conditions that do not hold, each named: 1 to 4, which hold after
/// any run, and with `loaded` 5 to 12 too, which scan every order line, customer and
/// history row (11 holds only on a database as loaded).
pub fn violations(dsn: &str, loaded: bool, stop: &AtomicBool) -> Result<Vec<String>> {
    let mut out = postgres::psql(dsn, include_str!("sql/consistency.sql"), stop)?;
    if loaded {
        out.push('\n');
        out.push_str(&postgres::psql(dsn, include_str!("sql/consistency_load.sql"), stop)?);
    }
    Ok(conditions(&out))
}

/// The conditions that do not hold, from the rows the consistency checks return.
pub fn conditions(out: &str) -> Vec<String> {
    out.lines().filter(|l| !l.trim().is_empty()).map(|l| format!("condition {l}")).collect()
}

/// What the database holds of the transactions since its load: the new orders and
/// those with a line from another warehouse, the payments and those for a customer of
/// another warehouse, and the orders delivered.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SinceLoad {
    pub orders: u64,
    pub remote_orders: u64,
    pub payments: u64,
    pub remote_payments: u64,
    pub delivered: u64,
}

/// Reads what `dsn`'s database of `warehouses` holds since its load (a scan of its
/// orders and of its history).
pub fn since_load(dsn: &str, warehouses: u32, stop: &AtomicBool) -> Result<SinceLoad> {
    let sql = "SELECT (SELECT count(*) || ' ' || count(*) FILTER (WHERE o_all_local = 0) FROM orders WHERE o_id > 3000) \
               || ' ' || (SELECT count(*) || ' ' || count(*) FILTER (WHERE h_c_w_id <> h_w_id) FROM history) \
               || ' ' || (SELECT count(*) FROM orders WHERE o_id > 2100 AND o_carrier_id IS NOT NULL)";
    SinceLoad::parse(&postgres::psql(dsn, sql, stop)?, warehouses)
}

impl SinceLoad {
    /// What a database of `warehouses` says it holds: its new orders and remote ones, its
    /// history rows and remote payments, its orders delivered since the load.
    pub fn parse(row: &str, warehouses: u32) -> Result<SinceLoad> {
        let f: Vec<u64> = row.split_whitespace().filter_map(|v| v.parse().ok()).collect();
        match f[..] {
            [orders, remote_orders, history, remote_payments, delivered] => Ok(SinceLoad {
                orders,
                remote_orders,
                payments: history.saturating_sub(30_000 * warehouses as u64),
                remote_payments,
                delivered,
            }),
            _ => Err(Error::failed(format!("reading the TPC-C orders and history gave `{row}`"))),
        }
    }
}

/// A run's figures: HammerDB's, the log's, and how they compare.
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    /// The DBMS whose counters these are, as HammerDB names it in its line.
    pub dbms: &'static str,
    pub nopm: f64,
    pub tpm: f64,
    /// New orders per minute from pgbench's log: new-orders less those rolled back.
    pub log_nopm: f64,
    /// New-orders the log counted in the window, and the rollbacks among them.
    pub new_orders: u64,
    pub rolled_back: u64,
    /// Per transaction type: its name, its share of the transactions and the share asked.
    pub mix: Vec<(&'static str, f64, f64)>,
    pub retries: u64,
    pub failed: u64,
    /// Per transaction type with retries or failures: its name and its counts.
    pub retried: Vec<(&'static str, Counts)>,
    pub clients: u32,
    /// The window's length, in minutes.
    pub minutes: f64,
    /// HammerDB's time profile of each transaction type over the window.
    pub profile: Vec<Profile>,
    /// What the database holds since its load, and the deliveries the log counted in
    /// the whole run (each of ten districts).
    pub since_load: SinceLoad,
    pub deliveries: u64,
}

/// One transaction type's latencies over the window, as HammerDB's time profile lists
/// them (milliseconds), with its share of all the transactions' time.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    pub name: &'static str,
    pub calls: u64,
    /// min, avg, max, p25, p50, p75, p95, p99, sd, in ms.
    pub ms: [f64; 9],
    /// Its calls' summed latency, in ms.
    pub total_ms: f64,
}

impl Profile {
    /// The profile of the latencies (ns) in `h`.
    pub fn of(name: &'static str, h: &Histogram<u64>) -> Profile {
        let ms = |ns: f64| ns / 1e6;
        let q = |q: f64| ms(h.value_at_quantile(q) as f64);
        let mean = ms(h.mean());
        Profile {
            name,
            calls: h.len(),
            ms: [
                ms(h.min() as f64),
                mean,
                ms(h.max() as f64),
                q(0.25),
                q(0.5),
                q(0.75),
                q(0.95),
                q(0.99),
                ms(h.stdev()),
            ],
            total_ms: mean * h.len() as f64,
        }
    }
}

impl Figures {
    /// The figures of a window of `minutes` between readings `before` and `after`, in
    /// which the log counted `counts` per type (`names`, asked `weights`).
    pub fn new(
        before: Reading,
        after: Reading,
        minutes: f64,
        counts: &[Counts],
        names: &[&'static str],
        weights: &[u32],
        clients: u32,
    ) -> Figures {
        let retries = counts.iter().map(|c| c.retries).sum();
        let failed = counts.iter().map(|c| c.failed).sum();
        // each retry and each failure was a rollback too; the rest are new-orders'
        let rolled_back = (after.rollbacks.saturating_sub(before.rollbacks)).saturating_sub(retries + failed);
        let new_orders = counts.first().map_or(0, |c| c.done);
        let done: u64 = counts.iter().map(|c| c.done).sum();
        let asked: u32 = weights.iter().sum();
        let mix = names
            .iter()
            .zip(counts)
            .zip(weights)
            .map(|((n, c), w)| (*n, share(c.done, done), 100.0 * *w as f64 / asked.max(1) as f64))
            .collect();
        Figures {
            dbms: "PostgreSQL",
            nopm: after.next_o_id.saturating_sub(before.next_o_id) as f64 / minutes,
            tpm: after.xacts.saturating_sub(before.xacts) as f64 / minutes,
            log_nopm: new_orders.saturating_sub(rolled_back) as f64 / minutes,
            new_orders,
            rolled_back,
            mix,
            retries,
            failed,
            retried: names
                .iter()
                .zip(counts)
                .filter(|(_, c)| c.retries + c.failed > 0)
                .map(|(n, c)| (*n, *c))
                .collect(),
            clients,
            minutes,
            profile: Vec::new(),
            since_load: SinceLoad::default(),
            deliveries: 0,
        }
    }

    /// The new-orders rolled back, in percent of those the log counted.
    pub fn rollback_pct(&self) -> f64 {
        share(self.rolled_back, self.new_orders)
    }

    /// How far the log's NOPM is from the database's, in percent of the database's.
    pub fn apart_pct(&self) -> f64 {
        if self.nopm > 0.0 { 100.0 * (self.log_nopm - self.nopm).abs() / self.nopm } else { 0.0 }
    }

    /// The figures as a person reads them, HammerDB's line first.
    pub fn describe(&self) -> String {
        let mut out = format!("System achieved {:.0} NOPM from {:.0} {} TPM", self.nopm, self.tpm, self.dbms);
        out.push_str(&format!("; the transaction log: {:.0} NOPM ({:.1}% apart)", self.log_nopm, self.apart_pct()));
        if self.apart_pct() > 1.0 {
            out.push_str(&format!(
                " (the log counts a transaction in the second it ended, the database between its two readings: \
                 the up to {} transactions in flight at each end of the window, and PostgreSQL's counters, which a \
                 session adds to at most once a second, weigh in a short run; a longer duration narrows it)",
                self.clients
            ));
        }
        let mix: Vec<String> = self.mix.iter().map(|(n, got, asked)| format!("{n} {got:.1}% ({asked:.1}%)")).collect();
        out.push_str(&format!("; mix achieved (asked): {}", mix.join(", ")));
        out.push_str(&format!(
            "; new-orders rolled back: {} of {} ({:.2}%); retries {}, failed {}",
            self.rolled_back,
            self.new_orders,
            self.rollback_pct(),
            self.retries,
            self.failed
        ));
        if !self.retried.is_empty() {
            let each: Vec<String> =
                self.retried.iter().map(|(n, c)| format!("{n} {} retries, {} failed", c.retries, c.failed)).collect();
            out.push_str(&format!(" ({})", each.join("; ")));
        }
        let s = &self.since_load;
        if s.orders + s.payments > 0 {
            out.push_str(&format!(
                "; since the load: {:.1}% of {} new orders with a line from another warehouse, {:.1}% of {} payments \
                 for a customer of another, {} of {} delivery districts skipped (none left to deliver, or a \
                 concurrent delivery of the warehouse took it)",
                share(s.remote_orders, s.orders),
                s.orders,
                share(s.remote_payments, s.payments),
                s.payments,
                (10 * self.deliveries).saturating_sub(s.delivered),
                10 * self.deliveries
            ));
        }
        let all: f64 = self.profile.iter().map(|p| p.total_ms).sum();
        if all > 0.0 {
            // Little's law: the transactions in flight on average are the time spent in
            // them over the window's time; the rest of the clients' time is pgbench's
            out.push_str(&format!(
                "; Little's law: {:.2} transactions in flight on average for {} clients",
                all / (self.minutes * 60_000.0),
                self.clients
            ));
        }
        let types: Vec<String> = self
            .profile
            .iter()
            .map(|p| {
                let [min, avg, max, p25, p50, p75, p95, p99, sd] = p.ms.map(|v| format!("{v:.2}"));
                let share = if all > 0.0 { 100.0 * p.total_ms / all } else { 0.0 };
                format!("{} {}, {min}/{avg}/{max}, {p25}/{p50}/{p75}/{p95}/{p99}, {sd}, {share:.1}%", p.name, p.calls)
            })
            .collect();
        if !types.is_empty() {
            out.push_str(&format!(
                "; time profile in ms (calls, min/avg/max, p25/p50/p75/p95/p99, sd, share of time): {}",
                types.join("; ")
            ));
        }
        out
    }
}

/// One host's figures of a workload run on several hosts, each its own cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub host: String,
    pub nopm: f64,
    pub tpm: f64,
    /// The second of the run clock its window began.
    pub t: i64,
}

/// Each host's figures of workload `name` among `rows` (sources `tpcc:NAME@HOST`), in
/// the order of `hosts`; a host that recorded none is left out.
pub fn nodes(name: &str, hosts: &[String], rows: &[ObservationRow]) -> Vec<Node> {
    let figure = |host: &str, figure: &str| {
        let source = format!("tpcc:{name}@{host}");
        rows.iter().find(|r| r.source == source && r.name == figure).map(|r| (r.value, r.t))
    };
    hosts
        .iter()
        .filter_map(|host| {
            let ((nopm, t), (tpm, _)) = (figure(host, "nopm")?, figure(host, "tpm")?);
            Some(Node { host: host.clone(), nopm, tpm, t })
        })
        .collect()
}

/// HammerDB's line for a cluster of `hosts` nodes: the NOPM and TPM of those that
/// reported summed, then each node's.
pub fn cluster(nodes: &[Node], hosts: usize) -> String {
    let nopm: f64 = nodes.iter().map(|n| n.nopm).sum();
    let tpm: f64 = nodes.iter().map(|n| n.tpm).sum();
    let each: Vec<String> =
        nodes.iter().map(|n| format!("{} {:.0} NOPM from {:.0} TPM", n.host, n.nopm, n.tpm)).collect();
    let missing = match hosts - nodes.len().min(hosts) {
        0 => String::new(),
        n => format!(" ({n} of {hosts} reported no figures)"),
    };
    format!(
        "Cluster of {} nodes achieved {nopm:.0} NOPM from {tpm:.0} PostgreSQL TPM, the nodes' sum{missing}; per node: {}",
        nodes.len(),
        each.join(", ")
    )
}

/// `part` in percent of `whole`.
fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 { 0.0 } else { 100.0 * part as f64 / whole as f64 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hammerdb_figures_and_the_logs() {
        let before = Reading { next_o_id: 30_010, xacts: 1000, rollbacks: 10 };
        let after = Reading { next_o_id: 31_000, xacts: 3_400, rollbacks: 25 };
        let c = |done, retries| Counts { done, failed: 0, retries };
        let counts = [c(1000, 3), c(1000, 2), c(100, 0), c(100, 0), c(100, 0)];
        let f = Figures::new(before, after, 2.0, &counts, &["a", "b", "c", "d", "e"], &[10, 10, 1, 1, 1], 4);
        assert_eq!((f.nopm, f.tpm), (495.0, 1200.0));
        // 15 rollbacks, 5 of them retries: 10 new-orders rolled back
        assert_eq!((f.rolled_back, f.log_nopm, f.rollback_pct()), (10, 495.0, 1.0));
        assert!(f.describe().starts_with("System achieved 495 NOPM from 1200 PostgreSQL TPM;"), "{}", f.describe());
        let per_type = "retries 5, failed 0 (a 3 retries, 0 failed; b 2 retries, 0 failed)";
        assert!(f.describe().contains(per_type), "{}", f.describe());
        assert!((f.mix[0].1 - 43.478).abs() < 0.01 && (f.mix[0].2 - 43.478).abs() < 0.01);
        let mut h = crate::metrics::new_histogram();
        for ms in [1, 2, 3, 4] {
            h.record(ms * 1_000_000).unwrap();
        }
        let p = Profile::of("a", &h);
        assert_eq!(p.calls, 4);
        // within the histogram's two significant digits
        let expected = [1.0, 2.5, 4.0, 1.0, 2.0, 3.0, 4.0, 4.0, 1.118];
        assert!(p.ms.iter().zip(expected).all(|(got, want)| (got - want).abs() <= 0.02 * want), "{:?}", p.ms);
        let since_load =
            SinceLoad { orders: 1000, remote_orders: 96, payments: 200, remote_payments: 30, delivered: 38 };
        let said = Figures { since_load, deliveries: 4, ..f.clone() }.describe();
        assert!(
            said.contains(
                "since the load: 9.6% of 1000 new orders with a line from another warehouse, 15.0% of \
                               200 payments for a customer of another, 2 of 40 delivery districts skipped"
            ),
            "{said}"
        );
        let f = Figures { profile: vec![p], ..f };
        let said = f.describe();
        assert!(said.contains("(calls, min/avg/max, p25/p50/p75/p95/p99, sd, share of time): a 4, 1.00/"), "{said}");
        assert!(said.ends_with(", 100.0%"), "{said}");
        // 10 ms of transactions in a window of 2 minutes
        assert!(said.contains("Little's law: 0.00 transactions in flight on average for 4 clients"), "{said}");
    }

    #[test]
    fn a_clusters_figures_are_its_nodes_summed() {
        let row = |host: &str, name: &str, value: f64| ObservationRow {
            t: 12,
            source: format!("tpcc:oltp@{host}"),
            name: name.into(),
            value,
        };
        let rows = [row("a", "nopm", 1000.0), row("a", "tpm", 2500.0), row("b", "nopm", 900.0)];
        let rows = [&rows[..], &[row("b", "tpm", 2000.0), row("c", "nopm", 5.0)]].concat();
        let hosts = ["a", "b", "c"].map(String::from);
        let n = nodes("oltp", &hosts, &rows);
        assert_eq!(n.iter().map(|n| (n.host.as_str(), n.nopm)).collect::<Vec<_>>(), [("a", 1000.0), ("b", 900.0)]);
        assert!(nodes("other", &hosts, &rows).is_empty());
        assert_eq!(
            cluster(&n, 3),
            "Cluster of 2 nodes achieved 1900 NOPM from 4500 PostgreSQL TPM, the nodes' sum (1 of 3 reported no \
             figures); per node: a 1000 NOPM from 2500 TPM, b 900 NOPM from 2000 TPM"
        );
    }
}

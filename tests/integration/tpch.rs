//! `driver: tpch` against the real PostgreSQL: a server the test starts on loopback,
//! loaded at scale 0.01 and queried by a power run and two streams. The database is read
//! here independently of fathom: TPC-H's fixed cardinalities, and the rewritten queries'
//! answers against the spec's own formulation of them.

use crate::common::servers::{self, Postgres};
use crate::common::{Scratch, ops, text};

/// All rows of `sql` against `dsn`, one a line.
fn query(dsn: &str, sql: &str) -> String {
    let out = std::process::Command::new("psql").args(["-X", "-q", "-A", "-t", "-d", dsn, "-c", sql]).output().unwrap();
    assert!(out.status.success(), "{sql}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn count(dsn: &str, sql: &str) -> i64 {
    query(dsn, sql).parse().unwrap()
}

/// fathom's text of query `n`, at scale 0.01.
fn fathoms(n: u8) -> String {
    let path = format!("{}/src/drivers/tpch/sql/q{n}.sql", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).unwrap().replace("{FRACTION}", "0.01")
}

/// The spec's queries that fathom rewrites, as the spec writes them (correlated
/// subqueries, a view), with the same parameters.
const Q15_VIEW: &str = "CREATE TEMP VIEW revenue0 (supplier_no, total_revenue) AS SELECT l_suppkey, \
    sum(l_extendedprice * (1 - l_discount)) FROM lineitem WHERE l_shipdate >= date '1996-01-01' \
    AND l_shipdate < date '1996-01-01' + interval '3' month GROUP BY l_suppkey; \
    SELECT s_suppkey, s_name, s_address, s_phone, total_revenue FROM supplier, revenue0 WHERE s_suppkey = supplier_no \
    AND total_revenue = (SELECT max(total_revenue) FROM revenue0) ORDER BY s_suppkey;";
const Q17_SPEC: &str = "SELECT sum(l_extendedprice) / 7.0 AS avg_yearly FROM lineitem, part WHERE p_partkey = l_partkey \
    AND p_brand = 'Brand#23' AND p_container = 'MED BOX' AND l_quantity < (SELECT 0.2 * avg(l_quantity) \
    FROM lineitem WHERE l_partkey = p_partkey);";
const Q20_SPEC: &str = "SELECT s_name, s_address FROM supplier, nation WHERE s_suppkey IN (SELECT ps_suppkey \
    FROM partsupp WHERE ps_partkey IN (SELECT p_partkey FROM part WHERE p_name LIKE 'forest%') AND ps_availqty > \
    (SELECT 0.5 * sum(l_quantity) FROM lineitem WHERE l_partkey = ps_partkey AND l_suppkey = ps_suppkey \
    AND l_shipdate >= date '1994-01-01' AND l_shipdate < date '1994-01-01' + interval '1' year)) \
    AND s_nationkey = n_nationkey AND n_name = 'CANADA' ORDER BY s_name;";

#[test]
fn a_small_scale_is_loaded_and_its_queries_answer_as_the_spec_s() {
    let s = Scratch::new("tpch-dsn");
    let pg = Postgres::start(&s.dir.join("pg"), servers::free_port());
    query(&pg.dsn("postgres"), "CREATE DATABASE tpch");
    let dsn = pg.dsn("tpch");
    let path = s.scenario("name: dss\nworkloads:\n  h: {driver: tproch, scale: 0.01, streams: 2, duration: 300s}\n");
    let out = s.run(&["run", path.to_str().unwrap(), "--set", &format!("dsn={dsn}")]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("power run (stream 0, in the order 14 2 9 20 6 17 18 8 21"), "{stdout}");
    assert!(stdout.contains("geometric mean") && stdout.contains("query sets: stream 1"), "{stdout}");
    // the spec's cardinalities at SF 0.01 (clause 4.2.5), and every order with 1 to 7 lines
    for (table, rows) in [
        ("region", 5),
        ("nation", 25),
        ("supplier", 100),
        ("part", 2_000),
        ("partsupp", 8_000),
        ("customer", 1_500),
        ("orders", 15_000),
    ] {
        assert_eq!(count(&dsn, &format!("SELECT count(*) FROM {table}")), rows, "{table}");
    }
    let lines = "SELECT count(*) FROM (SELECT o_orderkey FROM orders LEFT JOIN lineitem ON l_orderkey = o_orderkey \
                 GROUP BY o_orderkey HAVING count(l_orderkey) NOT BETWEEN 1 AND 7) odd";
    assert_eq!(count(&dsn, lines), 0);
    let items = count(&dsn, "SELECT count(*) FROM lineitem");
    assert!((52_500..67_500).contains(&items), "{items} line items: about 4 per order");
    // Q1's groups: the (return flag, line status) pairs shipped by its date, counted apart
    let pairs = count(
        &dsn,
        "SELECT count(*) FROM (SELECT DISTINCT l_returnflag, l_linestatus FROM lineitem \
         WHERE l_shipdate <= date '1998-09-02') p",
    );
    assert_eq!((pairs, query(&dsn, &fathoms(1)).lines().count()), (4, 4));
    // Q6's revenue summed another way: per line, by year and discount in cents
    let q6 = "SELECT sum(r) FROM (SELECT l_extendedprice * l_discount AS r FROM lineitem WHERE extract(year FROM \
              l_shipdate) = 1994 AND round(l_discount * 100) IN (5, 6, 7) AND l_quantity <= 23) x";
    assert_eq!(query(&dsn, &fathoms(6)), query(&dsn, q6));
    // the rewritten queries answer as the spec's texts do
    let view = query(&dsn, &format!("BEGIN; {Q15_VIEW} ROLLBACK;"));
    assert_eq!(query(&dsn, &fathoms(15)), view.trim_start_matches("BEGIN").trim().trim_end_matches("ROLLBACK").trim());
    assert_eq!(query(&dsn, &fathoms(17)), query(&dsn, Q17_SPEC));
    let q20 = query(&dsn, Q20_SPEC);
    assert!(!q20.is_empty());
    assert_eq!(query(&dsn, &fathoms(20)), q20);
    // each query an op, run by the power run and both streams
    let show = s.show_json();
    let per: Vec<(String, u64)> =
        ops(&show, "h").iter().map(|o| (o["op"].as_str().unwrap().to_string(), o["ops"].as_u64().unwrap())).collect();
    let expected: Vec<(String, u64)> = (1..=22).map(|n| (format!("q{n}"), 3)).collect();
    assert_eq!(per, expected);
    let observed = |name: &str| {
        let o = show["observed"].as_array().unwrap().iter().find(|o| o["source"] == "tpch:h" && o["name"] == name);
        o.map(|o| o["mean"].as_f64().unwrap())
    };
    let (power, geomean) = (observed("power_s").unwrap(), observed("geomean_s").unwrap());
    assert!(geomean > 0.0 && geomean < power, "{geomean} {power}");
    assert!(observed("throughput_s").unwrap() > 0.0 && observed("failed") == Some(0.0));
    // `reuse` keeps the loaded tables; a query past `query_timeout` is cut, and said so
    let again = s.run(&[
        "run",
        path.to_str().unwrap(),
        "--set",
        &format!("dsn={dsn}"),
        "--set",
        "h.reuse=true",
        "--set",
        "h.queries=[1, 18]",
        "--set",
        "h.query_timeout=1ms",
    ]);
    assert!(again.status.success(), "{}", text(&again));
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(err.contains("reusing the TPC-H database of scale 0.01"), "{err}");
    // its query sets end it, its duration only caps it: the plan says so, never `about`
    assert!(err.contains(": at most ") && err.contains(" s, less once its work is done;"), "{err}");
    let said = String::from_utf8_lossy(&again.stdout);
    assert!(said.contains("0 of 2 queries completed") && said.contains("timed out"), "{said}");
}

#[test]
fn a_bad_scale_and_a_database_of_others_are_refused() {
    let s = Scratch::new("tpch-bad");
    let path = s.scenario("name: bad\nworkloads:\n  h:\n    driver: tpch\n    duration: 2s\n    scale: 0\n");
    let out = s.run(&["run", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("scenario.yaml:6") && err.contains("scale") && err.contains("above 0"), "{err}");
    let pg = Postgres::start(&s.dir.join("pg"), servers::free_port());
    let dsn = pg.dsn("postgres");
    query(&dsn, "CREATE TABLE orders (id int); INSERT INTO orders VALUES (7)");
    let out = s.run(&["run", path.to_str().unwrap(), "--set", "h.scale=0.01", "--set", &format!("dsn={dsn}")]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not TPC-H's") && err.contains("never drops"), "{err}");
    // a table of TPC-H's name is someone's too, if the database is not fathom's: kept
    assert_eq!(query(&dsn, "SELECT id FROM orders"), "7");
}

#[test]
fn a_psql_that_ends_before_its_rows_fails_the_load_with_its_message() {
    // a stand-in psql first on the PATH: the real one, except that it refuses COPY at once,
    // without reading the rows fathom then writes to it (lineitem's, the first COPY)
    let s = Scratch::new("tpch-copy-refused");
    let bin = s.dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let real = std::process::Command::new("sh").args(["-c", "command -v psql"]).output().unwrap();
    let real = String::from_utf8_lossy(&real.stdout).trim().to_string();
    let stand_in = format!(
        "#!/bin/sh\ncase \"$*\" in *'COPY '*) echo 'ERROR:  the stand-in refuses COPY' >&2; exit 1;; esac\nexec {real} \"$@\"\n"
    );
    let psql = bin.join("psql");
    std::fs::write(&psql, stand_in).unwrap();
    std::fs::set_permissions(&psql, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let pg = Postgres::start(&s.dir.join("pg"), servers::free_port());
    query(&pg.dsn("postgres"), "CREATE DATABASE tpch");
    let path = s.scenario("name: dss\nworkloads:\n  h: {driver: tpch, scale: 0.01, duration: 60s}\n");
    let path_var = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let out = s
        .fathom(&["run", path.to_str().unwrap(), "--set", &format!("dsn={}", pg.dsn("tpch"))])
        .env("PATH", path_var)
        .output()
        .unwrap();
    // fathom is not killed by the pipe its reader left (SIGPIPE): it says why the load failed
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("the stand-in refuses COPY"), "{}", text(&out));
    assert_eq!(s.runs()[0].0, "failed", "{}", text(&out));
}

//! The view from the storage side: PromQL queries against another Prometheus (node
//! exporter on storage nodes, an array's exporter), evaluated every interval of the run
//! and stored with it next to what the workloads saw.

use super::seam::{Observer, RunClock};
use crate::http;
use crate::scenario::RemoteQueries;
use crate::store::ObservationRow;
use crate::store::sink::{Record, Sink};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// One value of one series: the query's name with the series' labels, e.g.
/// `disk_busy{device="sda",instance="node1:9100"}`, and its value.
pub type Point = (String, f64);

/// The client the queries are sent with: each within 2 s, as they come every interval.
pub fn client(remote: &RemoteQueries) -> crate::error::Result<http::Client> {
    http::Client::new(&remote.auth, Duration::from_secs(2))
}

/// Evaluates every query of `remote` now. A query that fails is an error naming it; a
/// run goes on without that second's values.
pub fn query_all(client: &http::Client, remote: &RemoteQueries) -> Vec<Result<Vec<Point>, String>> {
    remote
        .queries
        .iter()
        .map(|(name, promql)| {
            let url = format!("{}/api/v1/query?query={}", remote.url.trim_end_matches('/'), http::encode(promql));
            let (code, body) = client.get(&url).map_err(|e| e.to_string())?;
            let answer: Value = serde_json::from_str(&body).map_err(|e| match code {
                401 | 403 => {
                    format!("HTTP {code}: the server refused fathom's credentials (`bearer_token_file`, `basic_auth`)")
                }
                _ => format!("{name}: HTTP {code}, not Prometheus JSON: {e}"),
            })?;
            points(name, &answer).map_err(|e| format!("{name}: {e}"))
        })
        .collect()
}

/// The points of a `/api/v1/query` answer: one per series of a vector, one for a scalar.
fn points(name: &str, answer: &Value) -> Result<Vec<Point>, String> {
    if answer["status"] != "success" {
        return Err(answer["error"].as_str().unwrap_or("the query failed").to_string());
    }
    let value = |v: &Value| v[1].as_str().and_then(|s| s.parse::<f64>().ok());
    let data = &answer["data"];
    match data["resultType"].as_str() {
        Some("scalar") => Ok(value(&data["result"]).map(|v| (name.to_string(), v)).into_iter().collect()),
        Some("vector") => Ok(data["result"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter_map(|s| {
                let labels: Vec<String> = s["metric"]
                    .as_object()?
                    .iter()
                    .filter(|(k, _)| k.as_str() != "__name__")
                    .map(|(k, v)| format!("{k}=\"{}\"", v.as_str().unwrap_or("")))
                    .collect();
                let series =
                    if labels.is_empty() { name.to_string() } else { format!("{name}{{{}}}", labels.join(",")) };
                Some((series, value(&s["value"])?))
            })
            .collect()),
        other => {
            Err(format!("a {} result; a query must give an instant vector or a scalar", other.unwrap_or("missing")))
        }
    }
}

/// The remote observer: `remote`'s queries every interval, each value stored at the
/// second it was taken (source `prometheus`). Failures are said once per query through
/// `progress`, not every interval, and do not stop the run.
pub struct Remote {
    pub remote: RemoteQueries,
    pub progress: Arc<dyn Fn(&str) + Send + Sync>,
}

impl Observer for Remote {
    fn name(&self) -> &'static str {
        "observe-remote"
    }

    fn observe(self: Box<Self>, sink: Sink, clock: RunClock, stop: &AtomicBool) -> crate::error::Result<()> {
        let client = client(&self.remote)?;
        let mut said: Vec<String> = Vec::new();
        let mut next = Instant::now();
        loop {
            if !crate::clock::sleep_until(next, stop) {
                return Ok(());
            }
            let t = clock.start.elapsed().as_secs() as i64;
            let mut rows = Vec::new();
            for result in query_all(&client, &self.remote) {
                match result {
                    Ok(points) => rows.extend(points.into_iter().map(|(name, value)| ObservationRow {
                        t,
                        source: "prometheus".into(),
                        name,
                        value,
                    })),
                    Err(e) if !said.contains(&e) => {
                        (self.progress)(&format!("observe: {}: {e}", self.remote.url));
                        said.push(e);
                    }
                    Err(_) => {}
                }
            }
            sink.send(Record::Observations(rows));
            next += self.remote.interval;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::points;
    use serde_json::json;

    #[test]
    fn vectors_and_scalars_become_named_points() {
        let v = json!({"status": "success", "data": {"resultType": "vector", "result": [
            {"metric": {"__name__": "up", "job": "node"}, "value": [1.5, "1"]},
            {"metric": {}, "value": [1.5, "0.25"]}]}});
        assert_eq!(points("up", &v).unwrap(), vec![("up{job=\"node\"}".to_string(), 1.0), ("up".to_string(), 0.25)]);
        let s = json!({"status": "success", "data": {"resultType": "scalar", "result": [1.5, "4"]}});
        assert_eq!(points("cores", &s).unwrap(), vec![("cores".to_string(), 4.0)]);
        let m = json!({"status": "success", "data": {"resultType": "matrix", "result": []}});
        assert!(points("x", &m).unwrap_err().contains("instant vector"));
        let e = json!({"status": "error", "error": "parse error"});
        assert_eq!(points("x", &e).unwrap_err(), "parse error");
    }
}

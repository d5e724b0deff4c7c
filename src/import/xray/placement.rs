//! VM groups placed on the inventory: X-Ray's `nodes` (an index, a list `1,2`, Python
//! slices `0:3`, `-1`, `all`, `n` the number of nodes: `:n-1`) become fathom's `hosts:`
//! selector of inventory slices, and its counts the workers on each host (`per_host`).

use super::written::VmGroup;
use crate::scenario::yaml::Value;

/// Where one VM group's workers run: the hosts (inventory positions, in order) and how
/// many on each.
#[derive(Debug, Clone, PartialEq)]
pub struct Placed {
    pub hosts: Vec<usize>,
    pub per_host: u32,
    /// How the counts became `per_host`, for `fathom lint`.
    pub said: String,
}

impl Placed {
    /// The `hosts:` selector: contiguous positions as one slice, `["0:2", "3:4"]`.
    pub fn selector(&self) -> String {
        let mut slices: Vec<(usize, usize)> = Vec::new();
        for &h in &self.hosts {
            match slices.last_mut() {
                Some((_, end)) if *end == h => *end += 1,
                _ => slices.push((h, h + 1)),
            }
        }
        let items: Vec<String> = slices.iter().map(|(a, b)| format!("\"{a}:{b}\"")).collect();
        format!("[{}]", items.join(", "))
    }

    /// Workers in all: what X-Ray's `stagger_secs` is spread over.
    pub fn workers(&self) -> u32 {
        self.per_host * self.hosts.len() as u32
    }
}

/// Places `group` on an inventory of `inventory` hosts. `count_per_cluster` is spread
/// evenly: each host runs ⌈count / hosts⌉ (fathom places the same number on each host, so
/// a remainder rounds every host up). Errors are the message for the `nodes` key.
pub fn place(group: &VmGroup, inventory: usize) -> Result<Placed, String> {
    let hosts = match &group.nodes {
        None | Some(Value::Null) => (0..inventory).collect(),
        Some(v) => nodes(&v.as_text().unwrap_or_default(), inventory)?,
    };
    if hosts.is_empty() {
        return Err("selects no node".into());
    }
    let n = hosts.len() as u32;
    let (per_host, said) = match (group.count_per_node, group.count_per_cluster) {
        (Some(_), Some(_)) => return Err("count_per_node and count_per_cluster are both given: give one".into()),
        (Some(c), None) => (c, format!("count_per_node {c}")),
        (None, Some(c)) => {
            let each = c.div_ceil(n);
            let extra = if each * n == c { String::new() } else { format!("; {} workers, not {c}", each * n) };
            (each, format!("count_per_cluster {c} over {n} hosts: {each} on each{extra}"))
        }
        (None, None) => (1, "one per node".into()),
    };
    if per_host == 0 {
        return Err("places no VM: a count of 0".into());
    }
    Ok(Placed { hosts, per_host, said })
}

/// X-Ray's `nodes` as inventory positions, in order, each once: items `I` or slices
/// `A:B` (Python's: either end may be left out, negative counts from the end).
pub fn nodes(text: &str, inventory: usize) -> Result<Vec<usize>, String> {
    let n = inventory as i64;
    let index = |s: &str, default: i64| -> Result<i64, String> {
        let s = s.trim();
        if s.is_empty() {
            return Ok(default);
        }
        let i = index_of(s, n).ok_or_else(|| format!("`{text}`: expected node indices (0, 1,2, 0:3, n-1, n/2)"))?;
        Ok(if i < 0 { n + i } else { i })
    };
    if text.trim() == "all" {
        return Ok((0..inventory).collect());
    }
    let mut out: Vec<usize> = Vec::new();
    for item in text.split(',') {
        let range = match item.split_once(':') {
            Some((a, b)) => index(a, 0)?.max(0)..index(b, n)?.min(n),
            None => {
                let i = index(item, 0)?;
                if i < 0 || i >= n {
                    return Err(format!(
                        "node {} is not in the inventory ({inventory} hosts: 0 to {})",
                        item.trim(),
                        n - 1
                    ));
                }
                i..i + 1
            }
        };
        for i in range {
            if !out.contains(&(i as usize)) {
                out.push(i as usize);
            }
        }
    }
    out.sort_unstable();
    Ok(out)
}

/// One index: a number, or X-Ray's `n` (the number of nodes) as is, less, or divided
/// (`n`, `n-1`, `n/2`).
fn index_of(s: &str, n: i64) -> Option<i64> {
    let Some(rest) = s.strip_prefix('n') else { return s.parse().ok() };
    let rest = rest.trim();
    let num = |t: &str| t.trim().parse::<i64>().ok();
    match rest.chars().next() {
        None => Some(n),
        Some('-') => num(&rest[1..]).map(|k| n - k),
        Some('+') => num(&rest[1..]).map(|k| n + k),
        Some('/') => num(&rest[1..]).filter(|&k| k > 0).map(|k| n / k),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(nodes: Option<&str>, per_node: Option<u32>, per_cluster: Option<u32>) -> VmGroup {
        VmGroup {
            _template: None,
            _vcpus: None,
            _ram_mb: None,
            _data_disks: None,
            nodes: nodes.map(|s| Value::String(s.into())),
            count_per_node: per_node,
            count_per_cluster: per_cluster,
        }
    }

    #[test]
    fn nodes_are_indices_lists_and_python_slices() {
        assert_eq!(nodes("0", 4).unwrap(), [0]);
        assert_eq!(nodes("1,2", 4).unwrap(), [1, 2]);
        assert_eq!(nodes("0:3", 4).unwrap(), [0, 1, 2]);
        assert_eq!(nodes("2:", 4).unwrap(), [2, 3]);
        assert_eq!(nodes(":-1", 4).unwrap(), [0, 1, 2]);
        assert_eq!(nodes("-1", 4).unwrap(), [3]);
        assert_eq!(nodes("all", 3).unwrap(), [0, 1, 2]);
        assert_eq!(nodes(":n-1", 4).unwrap(), [0, 1, 2]);
        assert_eq!(nodes(":n/2", 4).unwrap(), [0, 1]);
        assert!(nodes("n*2", 4).is_err());
        assert!(nodes("4", 4).unwrap_err().contains("node 4 is not in the inventory (4 hosts: 0 to 3)"));
    }

    #[test]
    fn the_selector_is_slices_of_the_inventory() {
        let p = place(&group(Some("0,1,3"), Some(2), None), 4).unwrap();
        assert_eq!(p.selector(), r#"["0:2", "3:4"]"#);
        assert_eq!((p.per_host, p.workers()), (2, 6));
    }

    #[test]
    fn a_count_per_cluster_rounds_every_host_up() {
        let p = place(&group(None, None, Some(5)), 2).unwrap();
        assert_eq!((p.hosts.clone(), p.per_host), (vec![0, 1], 3));
        assert!(p.said.contains("6 workers, not 5"), "{}", p.said);
        assert_eq!(place(&group(None, None, None), 3).unwrap().per_host, 1);
    }
}

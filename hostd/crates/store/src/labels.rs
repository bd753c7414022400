//! Short, unique names for targets: a chart legend or a table cell shows the
//! end of a path that tells the targets apart (`target`, `a/x` and `b/x`), not
//! the whole path, which the report shows once in its table of targets.

/// Longest short label; beyond it a target is called `T1`, `T2`, ….
pub const MAX_SHORT: usize = 28;

/// Short labels for `targets` (full labels as `files.csv` has them), in the
/// same order: for each, the fewest trailing path components that make it
/// unique among them. Labels that are not paths (`sim:x5-thermal*10`) stay
/// whole when short enough.
pub fn short_labels(targets: &[String]) -> Vec<String> {
    let parts: Vec<Vec<&str>> = targets
        .iter()
        .map(|t| t.split('/').filter(|p| !p.is_empty()).collect())
        .collect();
    let tail = |i: usize, n: usize| {
        let p = &parts[i];
        if p.is_empty() {
            return targets[i].clone();
        }
        p[p.len().saturating_sub(n)..].join("/")
    };
    let mut out = Vec::with_capacity(targets.len());
    for i in 0..targets.len() {
        let most = parts[i].len().max(1);
        let mut chosen = None;
        for n in 1..=most {
            let mine = tail(i, n);
            let clash = (0..targets.len())
                .any(|j| j != i && targets[j] != targets[i] && tail(j, n) == mine);
            if !clash {
                chosen = Some(mine);
                break;
            }
        }
        let label = chosen.unwrap_or_else(|| targets[i].clone());
        out.push(if label.chars().count() <= MAX_SHORT {
            label
        } else {
            format!("T{}", i + 1)
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn the_last_component_when_it_is_enough() {
        assert_eq!(
            short_labels(&s(&["/var/tmp/throttlescope-demo.Ab12/target"])),
            ["target"]
        );
        assert_eq!(short_labels(&s(&["/mnt/a", "/mnt/b"])), ["a", "b"]);
    }

    #[test]
    fn more_components_where_the_last_ones_clash() {
        assert_eq!(
            short_labels(&s(&["/mnt/a/x", "/mnt/b/x", "/mnt/c"])),
            ["a/x", "b/x", "c"]
        );
    }

    #[test]
    fn simulated_targets_keep_their_name_and_long_ones_get_a_number() {
        let long = format!("/{}", "y".repeat(40));
        assert_eq!(
            short_labels(&s(&["sim:x5-thermal*10", &long])),
            ["sim:x5-thermal*10", "T2"]
        );
    }
}

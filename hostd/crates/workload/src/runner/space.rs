//! The free-space check before any write ([`check_space`]).

use crate::backend::TargetBackend;
use crate::plan::Plan;

/// Checks, before any write, that each filesystem has room for the files of
/// all targets on it (plus 1 % and up to 64 MiB of headroom for metadata). Returns one line per
/// storage for `--dry-run`, or the error.
pub fn check_space(
    plan: &Plan,
    backends: &[Box<dyn TargetBackend>],
) -> Result<Vec<String>, String> {
    use hostd_records::units::human_bytes;
    let mut groups: Vec<(String, u64, u64, Vec<String>)> = Vec::new();
    for (i, b) in backends.iter().enumerate() {
        let Some(cap) = b.capacity() else { continue };
        let key = b.storage_key().unwrap_or_else(|| format!("target{i}"));
        let need = plan.targets[i].footprint();
        match groups.iter_mut().find(|g| g.0 == key) {
            Some(g) => {
                g.1 += need;
                g.3.push(plan.targets[i].spec.label.clone());
            }
            None => groups.push((
                key,
                need,
                cap.available,
                vec![plan.targets[i].spec.label.clone()],
            )),
        }
    }
    let mut lines = Vec::new();
    for (_, need, avail, labels) in groups {
        let headroom = need / 100 + (64u64 << 20).min(avail / 50);
        let line = format!(
            "free space on {}: need {} (+{} headroom), available {}",
            labels.join(", "),
            human_bytes(need),
            human_bytes(headroom),
            human_bytes(avail)
        );
        if need + headroom > avail {
            return Err(format!(
                "too little free space — {line}; use a smaller profile or free some space"
            ));
        }
        lines.push(format!("{line}: ok"));
    }
    Ok(lines)
}

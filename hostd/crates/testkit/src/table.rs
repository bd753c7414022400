//! Cells of a printed table (`hostd compare`'s terminal table), read by the columns its header
//! line sets.

/// The cells of the line that starts with `  {row}  `, one per column whose header starts
/// with `labels[k]` (found in order along the header line), trimmed. Panics, naming what is
/// missing, when a label or the row is not there.
pub fn row_cells<L: AsRef<str>>(table: &str, labels: &[L], row: &str) -> Vec<String> {
    let chars = |l: &str| l.chars().collect::<Vec<char>>();
    let header = chars(table.lines().next().unwrap_or_default());
    let mut starts: Vec<usize> = Vec::new();
    for label in labels {
        let l = chars(label.as_ref());
        let from = starts.last().map_or(0, |s| s + 1);
        let at = (from..header.len())
            .find(|&i| header[i..].starts_with(&l))
            .unwrap_or_else(|| {
                panic!(
                    "{} not in the header after the labels before it: {}",
                    label.as_ref(),
                    table.lines().next().unwrap_or_default()
                )
            });
        starts.push(at);
    }
    let line = table
        .lines()
        .find(|l| l.starts_with(&format!("  {row}  ")))
        .unwrap_or_else(|| panic!("no row {row:?} in\n{table}"));
    let line = chars(line);
    (0..starts.len())
        .map(|k| {
            let end = starts.get(k + 1).map_or(line.len(), |&e| e.min(line.len()));
            line[starts[k].min(end)..end]
                .iter()
                .collect::<String>()
                .trim()
                .to_string()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::row_cells;

    #[test]
    fn cells_are_cut_where_the_header_puts_the_columns() {
        let table =
            "  figure      a-long-name  b\n  rate        1.5 GB/s     –\n  rate limit  2            3";
        assert_eq!(
            row_cells(table, &["a-long", "b"], "rate"),
            ["1.5 GB/s", "–"]
        );
        // A row is named whole: "rate" is not "rate limit".
        assert_eq!(row_cells(table, &["a-long", "b"], "rate limit"), ["2", "3"]);
    }

    #[test]
    #[should_panic(expected = "no row")]
    fn a_missing_row_is_named() {
        row_cells("  figure  a\n  x  1", &["a"], "y");
    }
}

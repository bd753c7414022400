//! The conditions section: the user's tags and notes (`hostd run --tag --note`), the
//! starting state hostd set before measuring (trim, rest) and how the engine waited for
//! completions (`--poll` or not); absent when there are none.

use crate::svg::esc;
use hostd_records::conditions::Conditions;
use std::fmt::Write;

/// Tags as a table, notes as a list, one line per target's preparation.
pub(crate) fn section(c: &Conditions) -> String {
    if c.is_empty() {
        return String::new();
    }
    let mut h = String::from(r#"<section id="conditions"><h2>Conditions</h2>"#);
    if !c.tags.is_empty() {
        h.push_str(
            r#"<table id="conditions-tags"><tr><th class="l">tag</th><th class="l">value</th></tr>"#,
        );
        for (k, v) in &c.tags {
            let _ = write!(
                h,
                r#"<tr><td class="l">{}</td><td class="l">{}</td></tr>"#,
                esc(k),
                esc(v)
            );
        }
        h.push_str("</table>");
    }
    if !c.notes.is_empty() {
        h.push_str(r#"<ul id="conditions-notes">"#);
        for n in &c.notes {
            let _ = write!(h, "<li>{}</li>", esc(n));
        }
        h.push_str("</ul>");
    }
    if !c.preparation.is_empty() {
        h.push_str(r#"<ul id="conditions-preparation">"#);
        for p in &c.preparation {
            let _ = write!(h, "<li>{}: {}</li>", esc(&p.target), esc(&p.describe()));
        }
        h.push_str("</ul>");
    }
    if let Some(w) = c.wait {
        let _ = write!(
            h,
            r#"<p id="conditions-wait">Engine: {}.</p>"#,
            esc(w.describe())
        );
    }
    h.push_str("</section>");
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_and_notes_are_shown_escaped_and_nothing_without_them() {
        assert_eq!(section(&Conditions::default()), "");
        let c = Conditions::from_args(&["hub <2>".into()], &["fan=off".into()]).unwrap();
        let h = section(&c);
        assert!(
            h.contains(r#"<td class="l">fan</td><td class="l">off</td>"#),
            "{h}"
        );
        assert!(h.contains("<li>hub &lt;2&gt;</li>"), "{h}");
    }
}

//! The document's head: its security policy (no script, no network), the generator marker,
//! the title and the style sheet, and the page's heading.

use crate::svg::esc;
use crate::GENERATOR_MARKER;
use std::fmt::Write;

/// Everything before the first section, for a report titled `title`.
pub(crate) fn head(title: &str) -> String {
    head_titled("throttlescope run report", title)
}

/// Everything before the first section of a page headed "`kind` — `title`".
pub(crate) fn head_titled(kind: &str, title: &str) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
{marker}
<title>throttlescope — {t}</title>
<style>
body{{font-family:system-ui,sans-serif;margin:24px auto;padding:0 16px;color:#222;max-width:1000px}}
h1{{font-size:22px;overflow-wrap:anywhere}} h2{{font-size:17px;margin-top:28px;border-bottom:1px solid #ccc}}
svg.chart{{display:block;width:100%;height:auto;max-width:960px}}
.legend{{display:flex;flex-wrap:wrap;gap:4px 16px;font-size:12px;margin:6px 0 2px 62px}}
.legend .key{{white-space:nowrap}} .swatch{{display:inline-block;width:10px;height:10px;margin-right:5px;vertical-align:-1px}}
.scroll{{overflow-x:auto;max-width:100%}}
table{{border-collapse:collapse;font-size:12px}} td,th{{border:1px solid #ccc;padding:3px 6px;text-align:right}} td{{white-space:nowrap}}
@media (max-width:900px){{table{{font-size:11px}} td,th{{padding:2px 4px}}}}
th{{background:#f4f4f4}} td.l,th.l{{text-align:left}} td.path{{white-space:normal;overflow-wrap:anywhere;font-family:ui-monospace,monospace}} td.none{{white-space:normal;min-width:6em;max-width:11em;color:#555}}
.event{{margin:10px 0;padding:8px 12px;border-left:4px solid #888;background:#fafafa}}
.event ul{{margin:4px 0;font-size:12px}} .cause{{font-weight:bold}} .bimodal{{color:#b00;font-weight:bold}} details>summary{{cursor:pointer;color:#555}}
ol.events{{list-style:none;padding:0}} ol.events li{{margin:6px 0;padding-left:28px;text-indent:-28px}} ol.events ul li{{margin:1px 0;padding-left:0;text-indent:0}}
span.badge{{display:inline-block;box-sizing:border-box;min-width:20px;height:20px;padding:0 3px;border:1.5px solid;border-radius:10px;text-align:center;font-size:11px;font-weight:bold;line-height:17px;margin-right:8px;text-indent:0}}
.bar-grid{{display:grid;grid-template-columns:repeat(auto-fill,minmax(350px,1fr));gap:2px 28px}} .bar-grid h4{{font-size:13px;margin:12px 0 2px}} svg.hbars{{max-width:none}}
.note{{font-size:12px;color:#555}} tr.differs td{{background:#fff3cd}} tr.differs td.l:first-child{{font-weight:bold}}
</style></head><body>
<h1>{kind} — {t}</h1>
"#,
        t = esc(title),
        kind = esc(kind),
        marker = GENERATOR_MARKER
    );
    h
}

//! Headless Chromium (Debian's `chromium`, or `$CHROMIUM`) for the tests that open a page
//! hostd wrote: shared by the report's and the comparison's browser tests.
#![allow(dead_code)] // each test file uses its own subset

use std::path::Path;
use std::process::Command;

/// Headless, offline, logging the console to stderr.
pub const CHROMIUM_FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--enable-logging=stderr",
    "--v=0",
];

/// The browser: `$CHROMIUM`, else `chromium`.
pub fn chromium() -> String {
    std::env::var("CHROMIUM").unwrap_or_else(|_| "chromium".into())
}

/// Runs Chromium on `page` with `extra` flags and a fresh profile; returns (stdout, stderr).
pub fn run_chromium(page: &Path, extra: &[String]) -> (String, String) {
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new(chromium())
        .args(CHROMIUM_FLAGS)
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "could not start {} (install Debian's chromium: just setup): {e}",
                chromium()
            )
        });
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Occurrences of `needle` in `hay`.
pub fn count(hay: &str, needle: &str) -> usize {
    hay.matches(needle).count()
}

/// The `<svg id="ID" …>…</svg>` element of the dumped DOM.
pub fn svg_element<'a>(dom: &'a str, id: &str) -> &'a str {
    let start = dom
        .find(&format!(r#"<svg id="{id}""#))
        .unwrap_or_else(|| panic!("chart {id} missing from the DOM"));
    let end = dom[start..].find("</svg>").expect("svg closed") + start;
    &dom[start..end]
}

/// Measures, in the page, every text and event badge of every chart and every legend
/// key: pairs whose boxes overlap, boxes outside their chart, and a page wider than the
/// window. The result is written into the page as JSON for `--dump-dom`.
pub const LAYOUT_SCRIPT: &str = r#"<script>
(function () {
  const out = { overlaps: [], outside: [], page: {} };
  const vw = document.documentElement.clientWidth;
  out.page = { scrollWidth: document.documentElement.scrollWidth, clientWidth: vw };
  const hit = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 &&
                        a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  const name = (e) => (e.textContent || e.tagName).trim().slice(0, 40);
  const check = (where, items, bounds) => {
    const boxes = items.map((e) => ({ e, r: e.getBoundingClientRect() }))
                       .filter((b) => b.r.width > 0 && b.r.height > 0);
    for (const b of boxes) {
      if (bounds && (b.r.left < bounds.left - 0.5 || b.r.right > bounds.right + 0.5 ||
                     b.r.top < bounds.top - 0.5 || b.r.bottom > bounds.bottom + 0.5)) {
        out.outside.push(where + ": " + name(b.e));
      }
    }
    for (let i = 0; i < boxes.length; i++) {
      for (let j = i + 1; j < boxes.length; j++) {
        const [a, b] = [boxes[i], boxes[j]];
        // A badge's number sits inside its own circle.
        if (a.e.closest(".event-marker") && a.e.closest(".event-marker") === b.e.closest(".event-marker")) continue;
        if (hit(a.r, b.r)) out.overlaps.push(where + ": '" + name(a.e) + "' and '" + name(b.e) + "'");
      }
    }
  };
  document.querySelectorAll("svg.chart, svg").forEach((svg) => {
    const bounds = svg.getBoundingClientRect();
    if (bounds.right > vw + 0.5) out.outside.push(svg.id + " is wider than the window");
    const items = [...svg.querySelectorAll("text, .event-marker rect, .event-marker circle")];
    check(svg.id, items, bounds);
  });
  document.querySelectorAll(".scroll").forEach((d) => {
    if (d.scrollWidth > d.clientWidth + 0.5) {
      out.outside.push((d.querySelector("table") || d).id + " is wider than the page (" + d.scrollWidth + " > " + d.clientWidth + " px)");
    }
  });
  document.querySelectorAll(".legend").forEach((l, k) => {
    check("legend " + k, [...l.querySelectorAll(".key")], l.getBoundingClientRect());
  });
  const pre = document.createElement("pre");
  pre.id = "layout-check";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"#;

/// The layout check's findings for `page` in a window `width` px wide.
pub fn layout_problems(page: &Path, width: u32) -> (Vec<String>, Vec<String>, serde_json::Value) {
    let html = std::fs::read_to_string(page).unwrap();
    // The report allows no script; this copy allows exactly the check.
    let html = html.replacen(
        "default-src 'none';",
        "default-src 'none'; script-src 'unsafe-inline';",
        1,
    );
    let html = html.replacen("</body>", &format!("{LAYOUT_SCRIPT}</body>"), 1);
    let copy = page.with_file_name(format!("layout-{width}.html"));
    std::fs::write(&copy, html).unwrap();
    let (dom, _) = run_chromium(
        &copy,
        &["--dump-dom".into(), format!("--window-size={width},1000")],
    );
    let start = dom
        .find(r#"<pre id="layout-check">"#)
        .expect("layout check ran")
        + 23;
    let end = dom[start..].find("</pre>").unwrap() + start;
    let json = dom[start..end]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let list = |k: &str| -> Vec<String> {
        v[k].as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap().to_string())
            .collect()
    };
    (list("overlaps"), list("outside"), v["page"].clone())
}

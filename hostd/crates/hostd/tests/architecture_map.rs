//! ARCHITECTURE.md is a map of the code, and this test keeps it one (as rust-analyzer's
//! tidy tests keep its architecture page and Cargo its own docs): every crate of the
//! workspace has a row in the crate table and every row is a crate; the table's
//! "depends on" column is each crate's `hostd-*` dependencies in its Cargo.toml, no more and
//! no fewer; every type that implements `RunPart` is named in the pipeline table, and every
//! type named there implements it; every run-directory file the code names is on the page,
//! and every file the page names is one the code names; every source path the page names
//! exists; every file of the run-file registry (`RUN_FILES`) is on the page, and every
//! file of a run directory the page names is registered (or is no records file: the report,
//! the log, scenario-gen's truth); each "Where to add…" recipe names the file that holds the
//! list its change adds to (the registrations: the parts list, `RUN_FILES` and `RunData`,
//! `RULES`, `ENGINES`), and the engine recipe names every registered engine and every
//! engine file.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The repository root (this crate is `hostd/crates/hostd`).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

fn page() -> String {
    std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md")
}

/// The lines of the page's section under the heading `heading` (to the next heading of the
/// same or a higher level).
fn section<'a>(page: &'a str, heading: &str) -> Vec<&'a str> {
    let level = heading.chars().take_while(|c| *c == '#').count();
    let mut lines = page.lines().skip_while(|l| l.trim() != heading);
    assert!(lines.next().is_some(), "ARCHITECTURE.md has no `{heading}`");
    lines
        .take_while(|l| {
            let h = l.chars().take_while(|c| *c == '#').count();
            h == 0 || h > level
        })
        .collect()
}

/// The cells of a Markdown table's body rows (header and rule left out).
fn table_rows(lines: &[&str]) -> Vec<Vec<String>> {
    lines
        .iter()
        .filter(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

/// The text between backticks in `text`.
fn code_spans(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// The workspace's crates: directory name → the `hostd-*` crates (directory names) its
/// Cargo.toml depends on for building (all targets; not dev- or build-dependencies).
fn workspace_crates() -> Vec<(String, BTreeSet<String>)> {
    let dir = root().join("hostd/crates");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let Ok(text) = std::fs::read_to_string(path.join("Cargo.toml")) else {
            continue;
        };
        let toml: toml::Value = toml::from_str(&text).unwrap();
        let mut tables = vec![toml.get("dependencies")];
        for t in toml.get("target").and_then(|t| t.as_table()).into_iter() {
            tables.extend(t.values().map(|v| v.get("dependencies")));
        }
        let deps = tables
            .into_iter()
            .flatten()
            .filter_map(|t| t.as_table())
            .flat_map(|t| t.keys())
            .filter_map(|k| k.strip_prefix("hostd-"))
            .map(str::to_string)
            .collect();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        out.push((name, deps));
    }
    out.sort();
    out
}

/// The Rust sources of the workspace's crates without their tests: `src/`, each file's
/// unit tests (from its first `#[cfg(test)]` on, at its end) and the test support modules
/// (`testing.rs`, e.g. the private influxd of the InfluxDB tests) left out.
fn sources() -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = entry.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "rs")
                && p.file_name().is_some_and(|n| n != "testing.rs")
            {
                let text = std::fs::read_to_string(&p).unwrap();
                let code = match text.find("#[cfg(test)]") {
                    Some(i) => text[..i].to_string(),
                    None => text,
                };
                out.push((p, code));
            }
        }
    }
    let mut out = Vec::new();
    for (name, _) in workspace_crates() {
        walk(
            &root().join("hostd/crates").join(name).join("src"),
            &mut out,
        );
    }
    out
}

#[test]
fn every_crate_and_each_of_its_dependencies_is_on_the_page_and_nothing_else() {
    let page = page();
    let rows = table_rows(&section(&page, "### `hostd/crates/` (lowest first)"));
    let crates = workspace_crates();
    let names: BTreeSet<&str> = crates.iter().map(|(n, _)| n.as_str()).collect();
    let on_page: BTreeSet<&str> = rows.iter().map(|r| r[0].trim_matches('`')).collect();
    assert_eq!(
        on_page, names,
        "crates on the page (left) and in hostd/crates (right)"
    );
    for (name, deps) in &crates {
        let row = rows
            .iter()
            .find(|r| r[0].trim_matches('`') == name)
            .unwrap();
        let column = &row[2];
        let listed: BTreeSet<String> = match column.as_str() {
            "—" => BTreeSet::new(),
            // Every crate above it (the table is lowest first; test support comes after).
            "all" => rows
                .iter()
                .take_while(|r| r[0].trim_matches('`') != name)
                .map(|r| r[0].trim_matches('`').to_string())
                .collect(),
            // "records, workload (Windows only: …)": the names before any note.
            text => text
                .split(',')
                .map(|d| d.split('(').next().unwrap().trim().to_string())
                .filter(|d| !d.is_empty())
                .collect(),
        };
        assert_eq!(
            &listed, deps,
            "crate {name}: the page's \"depends on\" (left) and its Cargo.toml (right)"
        );
    }
}

#[test]
fn every_part_of_a_run_is_in_the_pipeline_table_and_nothing_else() {
    let mut parts = BTreeSet::new();
    for (path, code) in sources() {
        for rest in code.split("impl RunPart for ").skip(1) {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            assert!(!name.is_empty(), "{}", path.display());
            parts.insert(name);
        }
    }
    let page = page();
    let rows = table_rows(&section(&page, "## The run pipeline"));
    let on_page: BTreeSet<String> = rows
        .iter()
        .flat_map(|r| code_spans(&r[1]))
        .filter(|s| s.contains("::"))
        .map(|s| s.rsplit("::").next().unwrap().to_string())
        .collect();
    assert_eq!(
        on_page, parts,
        "parts in the pipeline table (left) and types that implement RunPart (right)"
    );
}

/// A name that is a file of a run directory: a lowercase name with one of the extensions
/// the run directory's files have.
fn is_run_file(name: &str) -> bool {
    const EXTENSIONS: [&str; 7] = [
        ".csv", ".json", ".jsonl", ".html", ".hlog", ".parquet", ".log",
    ];
    let stem_ok = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
    };
    EXTENSIONS
        .iter()
        .any(|e| name.strip_suffix(e).is_some_and(stem_ok))
}

/// The run-directory files the code names: the string constants that name one (each
/// record's `FILE_NAME`, the latency logs, the log file) and the names joined to a run
/// directory in place (`dir.join("report.html")`).
fn files_in_code() -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (_, code) in sources() {
        for line in code.lines() {
            let line = line.trim();
            let literal = if line.starts_with("pub const ") || line.starts_with("const ") {
                line.split('"')
                    .nth(1)
                    .filter(|_| line.contains(": &str = \""))
            } else {
                line.split(".join(\"")
                    .nth(1)
                    .and_then(|r| r.split('"').next())
            };
            if let Some(name) = literal.filter(|n| is_run_file(n)) {
                out.insert(name.to_string());
            }
        }
    }
    out
}

#[test]
fn every_run_directory_file_the_code_names_is_on_the_page_and_nothing_else() {
    let page = page();
    let named: BTreeSet<String> = code_spans(&page)
        .into_iter()
        .flat_map(|s| s.split([' ', ',', '(', ')']))
        .filter(|s| is_run_file(s))
        .map(str::to_string)
        .collect();
    let code = files_in_code();
    let missing: Vec<&String> = code.difference(&named).collect();
    assert!(
        missing.is_empty(),
        "run-directory files the code names and ARCHITECTURE.md does not: {missing:?}"
    );
    let stale: Vec<&String> = named.difference(&code).collect();
    assert!(
        stale.is_empty(),
        "files ARCHITECTURE.md names and no code does: {stale:?}"
    );
}

/// The checks above find what they look for: a page without a crate's row, with a part
/// the code lacks, and a file name are told apart.
#[test]
fn the_map_checks_see_what_they_parse() {
    let rows = table_rows(&["| a | b |", "|---|---|", "| `x` | y |"]);
    assert_eq!(rows, [vec!["`x`".to_string(), "y".to_string()]]);
    assert_eq!(code_spans("a `b` c `d::E`"), ["b", "d::E"]);
    assert!(is_run_file("files.csv") && is_run_file("latency-files.hlog"));
    assert!(!is_run_file("Cargo.toml") && !is_run_file("segment-*.parquet"));
    let page = "## A\n### B\n| h |\n|-|\n| `r` |\n## C\n| `s` |\n";
    assert_eq!(section(page, "### B").len(), 3);
    assert!(workspace_crates()
        .iter()
        .any(|(n, d)| n == "hostd" && d.contains("records")));
    assert!(files_in_code().contains("files.csv"));
}

/// Every file of the repository (outside build output and VCS), as paths relative to it.
fn repository_files() -> Vec<String> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if matches!(name.as_str(), ".git" | "target" | "build" | "node_modules") {
                continue;
            }
            let path = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                out.push(format!("{path}/"));
                walk(&e.path(), &path, out);
            } else {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root(), "", &mut out);
    out
}

/// A code span that names a source file or directory of the repository: a path with a
/// source extension, or one ending in `/` (`engine/`, `attribution/`). Run-directory files
/// (checked above) and code (`cmd/run.rs::parts`: the file part is taken) are told apart.
fn source_path(span: &str) -> Option<&str> {
    const EXTENSIONS: [&str; 10] = [
        ".rs", ".c", ".h", ".md", ".toml", ".sh", ".mjs", ".py", ".proto", ".yaml",
    ];
    let path = span.split("::").next()?;
    let plain = !path.is_empty()
        && !path.contains(' ')
        && path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/_-.".contains(c));
    (plain && (EXTENSIONS.iter().any(|e| path.ends_with(e)) || path.ends_with('/'))).then_some(path)
}

#[test]
fn every_source_path_the_page_names_exists() {
    let files = repository_files();
    let page = page();
    let mut missing = Vec::new();
    let mut checked = 0;
    for span in code_spans(&page) {
        // Directories of a run directory, not of the repository.
        const RUN_DIRS: [&str; 2] = ["spool/", "probe/"];
        let Some(path) = source_path(span).filter(|p| !RUN_DIRS.contains(p)) else {
            continue;
        };
        checked += 1;
        // A path on the page is named from where its section stands (`cmd/run.rs` inside
        // the hostd crate, `attribution/` inside analysis): some file of the repository ends
        // with it, at a path boundary.
        let found = files
            .iter()
            .any(|f| f == path || f.ends_with(&format!("/{path}")));
        if !found {
            missing.push(path.to_string());
        }
    }
    assert!(checked > 30, "only {checked} paths parsed from the page");
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names paths that do not exist: {missing:?}"
    );
}

/// The bullets of the page's "Where to add…" section, by their bold title ("A run file").
fn recipes(page: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in section(page, "## Where to add…") {
        if let Some(rest) = line.strip_prefix("- **") {
            let (title, text) = rest.split_once(":**").expect("a recipe's bold title");
            out.push((title.to_string(), text.to_string()));
        } else if let Some((_, text)) = out.last_mut() {
            text.push(' ');
            text.push_str(line.trim());
        }
    }
    out
}

/// The recipe titled `title`.
fn recipe(page: &str, title: &str) -> String {
    recipes(page)
        .into_iter()
        .find(|(t, _)| t == title)
        .unwrap_or_else(|| panic!("ARCHITECTURE.md has no \"Where to add…\" recipe `{title}`"))
        .1
}

/// The source file (relative to the repository) whose code outside its tests holds `marker`:
/// where a registration lives. Exactly one must.
fn defined_in(marker: &str) -> String {
    let found: Vec<PathBuf> = sources()
        .into_iter()
        .filter(|(_, code)| code.contains(marker))
        .map(|(p, _)| p)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "`{marker}` is in {found:?}, not in one file"
    );
    let root = root().canonicalize().unwrap();
    found[0]
        .canonicalize()
        .unwrap()
        .strip_prefix(&root)
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// Whether the code spans of `text` name the repository file `path`: a span that is the path
/// or its tail at a path boundary, with at least its directory (the page names a path from
/// where its section stands, `cmd/run/parts.rs`), the `::item` after it left out.
fn names_file(text: &str, path: &str) -> bool {
    code_spans(text).into_iter().any(|span| {
        let p = span.split("::").next().unwrap_or("");
        p.contains('/') && (path == p || path.ends_with(&format!("/{p}")))
    })
}

/// Each recipe names the file that holds the list its change adds to, found in the code by
/// the list's definition (so a list that moves fails here until its recipe follows).
#[test]
fn every_recipe_names_the_files_that_hold_its_registrations() {
    let page = page();
    let registrations = [
        ("A sink or any other part of a run", "pub fn assemble("),
        ("A run file", "pub const RUN_FILES"),
        ("A run file", "pub struct RunData"),
        ("A cause", "pub const RULES"),
        ("An I/O engine", "pub const ENGINES"),
    ];
    for (title, marker) in registrations {
        let file = defined_in(marker);
        assert!(
            names_file(&recipe(&page, title), &file),
            "the recipe `{title}` does not name {file}, which holds `{marker}`"
        );
    }
}

/// The run directory's files that hold no records of the registry: the report, hostd's log,
/// scenario-gen's truth.
const NOT_RECORDS: [&str; 3] = ["report.html", "hostd.log", "truth.json"];

/// Every registered run file is on the page, and every run-directory file the page names is
/// registered (or holds no records).
#[test]
fn every_registered_run_file_is_on_the_page_and_every_file_on_it_is_registered() {
    use hostd_records::run_files::RUN_FILES;
    let page = page();
    let spans: BTreeSet<&str> = code_spans(&page)
        .into_iter()
        .flat_map(|s| s.split([' ', ',', '(', ')']))
        .collect();
    let missing: Vec<&str> = RUN_FILES
        .iter()
        .map(|f| f.name)
        .filter(|n| !spans.contains(n))
        .collect();
    assert!(
        missing.is_empty(),
        "registered run files ARCHITECTURE.md does not name: {missing:?}"
    );
    let unregistered: Vec<&str> = spans
        .iter()
        .copied()
        .filter(|s| is_run_file(s))
        .filter(|s| RUN_FILES.iter().all(|f| f.name != *s) && !NOT_RECORDS.contains(s))
        .collect();
    assert!(
        unregistered.is_empty(),
        "run-directory files ARCHITECTURE.md names that RUN_FILES does not register: {unregistered:?}"
    );
}

/// The engine recipe names every registered engine and every engine file, and nothing else
/// in the engines' directory.
#[test]
fn the_engine_recipe_names_every_registered_engine_and_its_file() {
    use hostd_workload::engine::ENGINES;
    let text = recipe(&page(), "An I/O engine");
    let spans: BTreeSet<&str> = code_spans(&text).into_iter().collect();
    for e in ENGINES {
        assert!(
            spans.contains(e.name),
            "engine `{}` is registered but not named in the engine recipe",
            e.name
        );
    }
    let dir = root().join("hostd/crates/workload/src/engine");
    let files: BTreeSet<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".rs") && n != "mod.rs")
        .collect();
    assert_eq!(
        files.len(),
        ENGINES.len(),
        "one file per registered engine: {files:?}"
    );
    let named: BTreeSet<String> = spans
        .iter()
        .filter(|s| s.ends_with(".rs") && !s.contains('/'))
        .map(|s| s.to_string())
        .collect();
    assert_eq!(
        named, files,
        "engine files the recipe names (left) and in workload/src/engine/ (right)"
    );
}

/// The recipe checks read what they should: recipes by title with their wrapped lines, a
/// file named by its tail, and a registration found in one file.
#[test]
fn the_recipe_checks_see_what_they_parse() {
    let page =
        "## Where to add…\n- **A x:** one `a/b.rs` and\n  `c.rs::f`.\n- **B:** `d/`\n## Next\n";
    let r = recipes(page);
    assert_eq!(r.len(), 2);
    assert_eq!(r[0].0, "A x");
    assert!(names_file(&r[0].1, "src/a/b.rs") && !names_file(&r[0].1, "x/c.rs"));
    assert!(!names_file(&r[0].1, "src/xa/b.rs"));
    assert!(defined_in("pub const RUN_FILES").ends_with("records/src/run_files.rs"));
}

//! The shape of `src/`: dependencies point one way. Every file's references to other files of
//! the crate (`crate::`, `super::`, `self::` and child-module paths, in `use` declarations and
//! in code; comments, literals and inline test modules left out) form a graph that must have
//! no cycle, and whose edges between top-level modules only run down the layers that
//! `lib.rs`'s map states. A folder's front door (`mod.rs`, or the file beside the folder) and
//! the files inside it are one package: a file may use what its ancestors define.

// Test scaffolding, not product: an unwrap that fails is the run's failure, and nothing
// here is anyone's API.
#![allow(clippy::unwrap_used, unreachable_pub)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, top first; a module may use its own layer's modules and any layer below, never
/// one above. The same order as the map at the top of `src/lib.rs`.
const LAYERS: &[&[&str]] = &[
    &["lib", "program"],
    &["startup", "admin"],
    &["mcp"],
    &["mcp_legacy"],
    &["mcp_calls"],
    &["connect", "mcp_wire"],
    &["tools"],
    &["state", "server"],
    &["connections"],
    &[
        "flows",
        "grants",
        "leases",
        "limits",
        "sessions",
        "audit",
        "blocklist",
        "tasks",
        "replicas",
        "outbox",
    ],
    &["identity"],
    &["config"],
    &["providers"],
    &["demo"],
    &["store"],
    &[
        "seal",
        "quota",
        "cookie",
        "metrics",
        "telemetry",
        "ui",
        "ids",
        "access",
    ],
];

/// A file of the crate, named by its module path (`mcp::edge`; `lib` for the root).
type Module = String;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every library file (the binary under `bin/` and test-only files left out), by module.
fn modules() -> BTreeMap<Module, PathBuf> {
    let mut found = BTreeMap::new();
    let mut stack = vec![src()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "bin" && n != "tests") {
                    stack.push(path);
                }
                continue;
            }
            let relative = path
                .strip_prefix(src())
                .unwrap()
                .to_string_lossy()
                .into_owned();
            // Test modules (`tests.rs`, a `tests/` folder) are no part of the shape.
            let test_module = relative
                .split('/')
                .any(|part| part == "tests" || part == "tests.rs");
            if !relative.ends_with(".rs") || test_module {
                continue;
            }
            let module = relative
                .trim_end_matches(".rs")
                .trim_end_matches("/mod")
                .replace('/', "::");
            found.insert(module, path);
        }
    }
    found
}

/// The code of a file without its comments and literals (doc links and messages name modules
/// without using them).
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let rest = &chars[i..];
        if rest.starts_with(&['/', '/']) {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if rest.starts_with(&['/', '*']) {
            i += 2;
            while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                i += 1;
            }
            i += 2;
        } else if rest[0] == 'r' && matches!(rest.get(1), Some('"' | '#')) && !ident(&chars, i) {
            // A raw string: r"…", r#"…"#.
            let hashes = rest[1..].iter().take_while(|c| **c == '#').count();
            i += 2 + hashes;
            while i < chars.len()
                && !(chars[i] == '"' && chars[i + 1..].iter().take(hashes).all(|c| *c == '#'))
            {
                i += 1;
            }
            i += 1 + hashes;
            out.push_str("\"\"");
        } else if rest[0] == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if rest[0] == '\'' && rest.get(2) == Some(&'\'') {
            i += 3; // a character literal
        } else if rest[0] == '\'' && rest.get(1) == Some(&'\\') {
            i += rest
                .iter()
                .skip(2)
                .position(|c| *c == '\'')
                .map_or(1, |p| p + 3);
        } else {
            out.push(rest[0]);
            i += 1;
        }
    }
    out
}

/// The code without its inline `#[cfg(test)] mod … { … }` blocks (a test module's `super` is
/// its file, not the file's parent).
fn without_test_modules(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = rest[at + "#[cfg(test)]".len()..].trim_start();
        let Some(block) = after
            .strip_prefix("mod ")
            .and_then(|m| m.find('{').map(|b| (m, b)))
        else {
            rest = &rest[at + "#[cfg(test)]".len()..];
            continue;
        };
        let (module, open) = block;
        if module[..open].contains(';') {
            rest = &rest[at + "#[cfg(test)]".len()..];
            continue;
        }
        let mut depth = 0;
        let mut end = module.len();
        for (i, c) in module[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &module[end..];
    }
    out.push_str(rest);
    out
}

/// Whether the character before `at` continues an identifier.
fn ident(chars: &[char], at: usize) -> bool {
    at > 0 && (chars[at - 1].is_alphanumeric() || chars[at - 1] == '_')
}

/// Expands `use` trees (`a::{b, c::{d, e}}`) into whole paths.
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        return vec![tree.split(" as ").next().unwrap().trim().to_owned()];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').unwrap()];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .flat_map(expand)
        .map(|p| {
            if p == "self" {
                prefix.trim_end_matches("::").to_owned()
            } else {
                format!("{prefix}{p}")
            }
        })
        .collect()
}

/// The paths a file's code names: `use` declarations expanded, and paths written in code.
fn paths(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let before = rest[..at].chars().last();
        let after_use = &rest[at + 4..];
        rest = after_use;
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(end) = after_use.find(';') {
            found.extend(expand(&after_use[..end]));
        }
    }
    let bytes = code.as_bytes();
    for (i, _) in code.match_indices("::") {
        let start = code[..i]
            .rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .map_or(0, |s| s + 1);
        if start < i && (start == 0 || bytes[start - 1] != b'$') {
            let end = code[i..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .map_or(code.len(), |e| i + e);
            found.push(code[start..end].to_owned());
        }
    }
    found
}

/// The module a path names from `module`'s file, if it is a file of the crate.
fn target(
    path: &str,
    module: &str,
    children: &BTreeSet<String>,
    files: &BTreeMap<Module, PathBuf>,
) -> Option<Module> {
    let parent = |m: &str| match m.rfind("::") {
        Some(at) => m[..at].to_owned(),
        None => "lib".to_owned(),
    };
    let segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let (mut base, rest): (Vec<String>, &[&str]) = match segments.first()? {
        &"crate" => (vec![], &segments[1..]),
        &"super" => {
            let mut base = parent(module);
            let mut rest = &segments[1..];
            while rest.first() == Some(&"super") {
                base = parent(&base);
                rest = &rest[1..];
            }
            (split(&base), rest)
        }
        &"self" => (split(module), &segments[1..]),
        first if children.contains(*first) => (split(module), &segments[..]),
        _ => return None,
    };
    let start = if base.is_empty() {
        "lib".to_owned()
    } else {
        base.join("::")
    };
    let mut found = files.contains_key(&start).then_some(start);
    for segment in rest {
        base.push((*segment).to_owned());
        let candidate = base.join("::");
        if !files.contains_key(&candidate) {
            break;
        }
        found = Some(candidate);
    }
    found
}

/// Whether `ancestor` is `module` or holds it: a folder's front door (`mod.rs`, `lib.rs`)
/// and the files in the folder are one package, whose files may use what the door defines.
fn is_ancestor(ancestor: &str, module: &str) -> bool {
    ancestor == module || ancestor == "lib" || module.starts_with(&format!("{ancestor}::"))
}

fn split(module: &str) -> Vec<String> {
    if module == "lib" {
        return vec![];
    }
    module.split("::").map(str::to_owned).collect()
}

/// The graph: each file and the files it names.
fn graph() -> BTreeMap<Module, BTreeSet<Module>> {
    let files = modules();
    let mut graph = BTreeMap::new();
    for (module, path) in &files {
        let code = without_test_modules(&code(path));
        let children: BTreeSet<String> = code
            .lines()
            .filter_map(|l| {
                let l = l.trim();
                let l = l.strip_prefix("pub ").unwrap_or(l);
                let l = l.strip_prefix("pub(crate) ").unwrap_or(l);
                l.strip_prefix("mod ")?.strip_suffix(';').map(str::to_owned)
            })
            .collect();
        let mut targets = BTreeSet::new();
        for path in paths(&code) {
            if let Some(t) = target(&path, module, &children, &files)
                && !is_ancestor(&t, module)
            {
                targets.insert(t);
            }
        }
        graph.insert(module.clone(), targets);
    }
    graph
}

/// The strongly connected components with more than one file (Tarjan's algorithm).
fn cycles(graph: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<Vec<Module>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, node: &'a str) {
            let n = self.index.len();
            self.index.insert(node, n);
            self.low.insert(node, n);
            self.stack.push(node);
            self.on_stack.insert(node);
            for next in &self.graph[node] {
                let next = next.as_str();
                if !self.index.contains_key(next) {
                    self.visit(next);
                    let low = self.low[node].min(self.low[next]);
                    self.low.insert(node, low);
                } else if self.on_stack.contains(next) {
                    let low = self.low[node].min(self.index[next]);
                    self.low.insert(node, low);
                }
            }
            if self.low[node] == self.index[node] {
                let mut component = Vec::new();
                while let Some(top) = self.stack.pop() {
                    self.on_stack.remove(top);
                    component.push(top.to_owned());
                    if top == node {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for node in graph.keys() {
        if !walk.index.contains_key(node.as_str()) {
            walk.visit(node);
        }
    }
    walk.found
}

fn layer(module: &str) -> usize {
    let top = module.split("::").next().unwrap();
    LAYERS
        .iter()
        .position(|layer| layer.contains(&top))
        .unwrap_or_else(|| panic!("`{top}` is in no layer: add it to LAYERS and lib.rs's map"))
}

#[test]
fn the_module_graph_has_no_cycle() {
    let found = cycles(&graph());
    assert!(
        found.is_empty(),
        "import cycles among the files of src/: {found:#?}"
    );
}

#[test]
fn no_module_uses_one_of_a_higher_layer() {
    let mut upward = Vec::new();
    for (module, targets) in graph() {
        for target in targets {
            if layer(&target) < layer(&module) {
                upward.push(format!("{module} -> {target}"));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports running up the layers: {upward:#?}"
    );
}

#[test]
fn the_reader_sees_what_it_should() {
    let files = modules();
    let children = BTreeSet::from(["edge".to_owned()]);
    let t = |path: &str| target(path, "mcp", &children, &files);
    assert_eq!(t("crate::store::StoreError").as_deref(), Some("store"));
    assert_eq!(t("edge::Edge").as_deref(), Some("mcp::edge"));
    assert_eq!(t("super::state::AppState").as_deref(), Some("state"));
    assert_eq!(
        expand("crate::{a::B, c::{d, e::F}}"),
        ["crate::a::B", "crate::c::d", "crate::c::e::F"]
    );
}

/// The layers as `lib.rs`'s map states them: a row naming a layer starts one, a row without
/// a name adds its modules to the layer above it.
fn layers_in_the_map() -> Vec<Vec<String>> {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let mut layers: Vec<Vec<String>> = Vec::new();
    for row in lib.lines().filter_map(|l| l.strip_prefix("//! |")) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let (name, modules) = (cells[0], cells.get(1).copied().unwrap_or_default());
        if name == "layer" || name.starts_with("---") {
            continue;
        }
        let mut named: Vec<String> = modules
            .split("[`")
            .skip(1)
            .filter_map(|part| part.split("`]").next())
            .map(str::to_owned)
            .collect();
        if modules == "this file" {
            named.push("lib".to_owned());
        }
        match layers.last_mut() {
            Some(layer) if name.is_empty() => layer.extend(named),
            _ => layers.push(named),
        }
    }
    for layer in &mut layers {
        layer.sort();
    }
    layers
}

#[test]
fn the_map_in_lib_rs_states_these_layers() {
    let expected: Vec<Vec<String>> = LAYERS
        .iter()
        .map(|layer| {
            let mut modules: Vec<String> = layer.iter().map(|m| (*m).to_owned()).collect();
            modules.sort();
            modules
        })
        .collect();
    assert_eq!(layers_in_the_map(), expected);
}

/// The crates a package pulls into its build (normal and build dependencies, transitively),
/// from `cargo metadata`'s resolved graph.
fn build_closure(package: &str) -> BTreeSet<String> {
    let output = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--locked"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(output.status.success(), "cargo metadata: {output:?}");
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let name_of = |id: &str| {
        metadata["packages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["id"] == id)
            .map(|p| p["name"].as_str().unwrap().to_owned())
            .unwrap()
    };
    let nodes = metadata["resolve"]["nodes"].as_array().unwrap();
    let start = nodes
        .iter()
        .find(|n| name_of(n["id"].as_str().unwrap()) == package)
        .unwrap();
    let mut seen = BTreeSet::new();
    let mut todo = vec![start];
    while let Some(node) = todo.pop() {
        for dep in node["deps"].as_array().unwrap() {
            let not_dev = dep["dep_kinds"]
                .as_array()
                .unwrap()
                .iter()
                .any(|k| k["kind"] != "dev");
            let id = dep["pkg"].as_str().unwrap();
            if not_dev && seen.insert(name_of(id)) {
                todo.push(nodes.iter().find(|n| n["id"] == id).unwrap());
            }
        }
    }
    seen
}

#[test]
fn the_bridge_builds_without_any_server_crate() {
    let closure = build_closure("grantry-bridge");
    let server: Vec<&String> = closure
        .iter()
        .filter(|name| {
            *name == "grantry"
                || ["sqlx", "redis", "rmcp", "askama", "fluent", "metrics"]
                    .iter()
                    .any(|server_crate| name.starts_with(server_crate))
        })
        .collect();
    assert!(server.is_empty(), "the bridge pulls in {server:?}");
    assert!(closure.contains("grantry-base"), "{closure:?}");
}

#[test]
fn the_base_depends_on_no_other_grantry_crate() {
    let closure = build_closure("grantry-base");
    let grantry: Vec<&String> = closure
        .iter()
        .filter(|n| n.starts_with("grantry"))
        .collect();
    assert!(grantry.is_empty(), "grantry-base pulls in {grantry:?}");
}

#[test]
fn the_pages_reach_connections_through_the_service_never_through_the_tools() {
    let into_tools: Vec<String> = graph()
        .into_iter()
        .filter(|(module, _)| module == "connect" || module.starts_with("connect::"))
        .flat_map(|(module, targets)| {
            targets
                .into_iter()
                .filter(|t| t == "tools" || t.starts_with("tools::"))
                .map(move |t| format!("{module} -> {t}"))
        })
        .collect();
    assert!(
        into_tools.is_empty(),
        "connect uses the tools: {into_tools:#?}"
    );
}

/// The protocols (`mcp`, `connect`) and the tools reach a person's grants through the
/// connections service: of `grants` they name only its values (a key, a grant as read, its
/// state and why), never its store or a backend.
#[test]
fn the_connections_service_stands_between_the_protocols_and_the_stores() {
    const VALUES: [&str; 5] = ["GrantKey", "Grant", "State", "ReauthReason", "Health"];
    let files = modules();
    let mut reaching: Vec<String> = Vec::new();
    for (module, path) in &files {
        let top = module.split("::").next().unwrap();
        if !["mcp", "connect", "tools"].contains(&top) {
            continue;
        }
        let code = without_test_modules(&code(path));
        for named in paths(&code) {
            let Some(rest) = named.strip_prefix("crate::grants::") else {
                continue;
            };
            let item = rest.split("::").next().unwrap();
            let item = item.split(" as ").next().unwrap().trim();
            // The bare prefix of a use tree (`crate::grants::{…}`), as the code scan sees it.
            if !item.is_empty() && !VALUES.contains(&item) {
                reaching.push(format!("{module} names crate::grants::{rest}"));
            }
        }
    }
    assert!(
        reaching.is_empty(),
        "protocols reaching past the connections service: {reaching:#?}"
    );
}

/// A provider travels as a `ProviderId` once read: no parameter or field takes it as text,
/// except where it is read (the catalog) and the row codecs of the stores.
#[test]
fn no_provider_travels_as_text() {
    let files = modules();
    let codecs = ["sql", "redis", "record"];
    let as_text = [
        "provider: &str",
        "provider: &'a str",
        "provider: Option<&str>",
    ];
    let mut found = Vec::new();
    for (module, path) in &files {
        let leaf = module.rsplit("::").next().unwrap();
        if module.starts_with("providers::catalog") || codecs.contains(&leaf) {
            continue;
        }
        let code = without_test_modules(&code(path));
        for pattern in as_text {
            if code.contains(pattern) {
                found.push(format!("{module}: `{pattern}`"));
            }
        }
    }
    assert!(found.is_empty(), "providers as text: {found:#?}");
}

/// The whole state (`AppState`, every service of the process) is named only where the program
/// is assembled and by the handlers that really need most of it. A tool gets its
/// `tools::Services` (the connections service, the catalog), the rounds their `Rounds` (lent
/// by `mcp_calls::rounds::services`), the pages their `PageServices` (`connect::services`); no
/// tool, no other round and no page may name the state.
#[test]
fn few_files_name_the_whole_state() {
    // The files that may: lib.rs, state, startup (2), the endpoint's router, auth and
    // endpoint, the calls' dispatch, extension point and tasks, the legacy era's session and
    // notices, and the two that lend a share of it: mcp_calls::rounds::services (the rounds')
    // and connect (the pages', taken once by its router in connect::services).
    const MOST: usize = 15;
    let naming: Vec<Module> = modules()
        .into_iter()
        .filter(|(_, path)| names_word(&without_test_modules(&code(path)), "AppState"))
        .map(|(module, _)| module)
        .collect();
    let forbidden: Vec<&Module> = naming
        .iter()
        .filter(|m| {
            m.as_str() == "tools"
                || m.starts_with("tools::")
                || (m.starts_with("mcp_calls::rounds")
                    && m.as_str() != "mcp_calls::rounds::services")
                || (m.starts_with("connect::") && m.as_str() != "connect::services")
        })
        .collect();
    assert!(
        forbidden.is_empty(),
        "tools, rounds or pages name the whole state: {forbidden:#?}"
    );
    assert!(
        naming.len() <= MOST,
        "{} files name AppState (at most {MOST}): {naming:#?}",
        naming.len()
    );
}

/// rmcp (the official SDK) serves the legacy era and nothing else: only `mcp_legacy` and its
/// files name it. The modern era, the edge and the calls are grantry's own types.
#[test]
fn only_the_legacy_era_names_rmcp() {
    let naming: Vec<Module> = modules()
        .into_iter()
        .filter(|(module, _)| module != "mcp_legacy" && !module.starts_with("mcp_legacy::"))
        .filter(|(_, path)| names_word(&without_test_modules(&code(path)), "rmcp"))
        .map(|(module, _)| module)
        .collect();
    assert!(
        naming.is_empty(),
        "rmcp named outside mcp_legacy: {naming:#?}"
    );
}

/// Whether `code` holds `word` as a whole identifier.
fn names_word(code: &str, word: &str) -> bool {
    code.match_indices(word).any(|(at, _)| {
        let before = code[..at].chars().next_back();
        let after = code[at + word.len()..].chars().next();
        let part = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        !part(before) && !part(after)
    })
}

/// The library's public surface is deliberate: an item is `pub` only where another crate of
/// the workspace, the fuzz crate or the binary names it (everything else is `pub(crate)`).
/// The count may only fall; a new public item means another crate needs it, or it should
/// not be public.
#[test]
fn the_public_surface_stays_within_its_count() {
    // 265 before the MCP rooms were split and re-exports that only spared the store suite and
    // the benchmarks a path were narrowed; 260 until the store suite moved into the crate
    // (src/tests), which let the backend traits and what only it named become the crate's.
    const MOST: usize = 214;
    let is_item = |line: &str| {
        let Some(rest) = line.trim_start().strip_prefix("pub ") else {
            return false;
        };
        let rest = rest.strip_prefix("async ").unwrap_or(rest);
        [
            "fn ", "struct ", "enum ", "mod ", "use ", "const ", "static ", "type ", "trait ",
        ]
        .iter()
        .any(|kind| rest.starts_with(kind))
    };
    let mut public: Vec<String> = Vec::new();
    for (module, path) in modules() {
        for line in code(&path).lines().filter(|line| is_item(line)) {
            public.push(format!("{module}: {}", line.trim()));
        }
    }
    assert!(
        public.len() <= MOST,
        "{} pub items (at most {MOST}); make the new ones pub(crate) unless another crate \
         names them: {public:#?}",
        public.len()
    );
}

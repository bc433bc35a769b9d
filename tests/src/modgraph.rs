//! The module graph of a crate, read from its source, and the circles in
//! it: the check that keeps every crate of the workspace free of import
//! circles (`no_crate_has_a_module_circle` below runs it on each).
//!
//! A node is a module that has a file of its own (`scan.rs`,
//! `scan/lists.rs`, the crate root); an inline module (`mod x { ... }`)
//! belongs to its file's node. There is an edge from module A to module B
//! when code of A names B or an item inside B by a path:
//!
//! - `crate::b::item`, `super::item`, `super::b::item`, `self::b::item`,
//!   and `b::item` where `b` is a child module of A, in `use` trees, types,
//!   expressions, patterns, macro invocations and attributes (the tokens
//!   of a macro's or an attribute's arguments are searched for such paths
//!   too, so `#[arg(value_parser = crate::b::parse)]` is an edge);
//! - the path resolves to the deepest module it names: `crate::scan::Job`
//!   is an edge to `scan`, `crate::scan::lists::read` one to `scan::lists`,
//!   `super::Job` from `scan::lists` one to `scan` (its parent).
//!
//! Not edges: a `mod b;` declaration by itself (a parent owns its
//! children), a lone name in code (a local `b` is no module), paths into
//! other crates, and test code (an item under
//! `#[cfg(test)]`, such as `mod tests`), whose imports say nothing about
//! how the crate is built.
//!
//! A circle is a strongly connected set of two or more modules: each can be
//! reached from the others by following edges.
//!
//! A crate may also name a leaf folder ([`LEAVES`]): the modules under it
//! (the segmenter's `commands`, one per command) are named by the crate
//! root, whose dispatch runs them, and by no other module outside their
//! own command's files (`no_module_imports_a_command` below; what two
//! commands share belongs in a layer under them).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

/// The modules of a crate and the edges between them.
#[derive(Debug, Default)]
pub struct Graph {
    /// Module paths (`""` for the crate root, `scan`, `scan::lists`) with
    /// their files.
    pub modules: BTreeMap<String, PathBuf>,
    /// `from` → `to`, each with one place that makes it (`file: path`).
    pub edges: BTreeMap<(String, String), String>,
}

/// Reads the crate whose root file is `root` (`src/lib.rs`, `src/main.rs`).
pub fn read_crate(root: &Path) -> Result<Graph, String> {
    let mut files = Vec::new();
    collect_files(root, "", &mut files)?;
    let mut graph = Graph::default();
    for (module, path, _) in &files {
        graph.modules.insert(module.clone(), path.clone());
    }
    for (module, path, file) in &files {
        let mut found = Paths {
            scope: module.clone(),
            paths: Vec::new(),
        };
        found.visit_file(file);
        for (scope, segments) in found.paths {
            let Some(to) = resolve(&graph.modules, &scope, &segments) else {
                continue;
            };
            if !is_ancestor(&to, module) {
                let why = format!("{}: {}", path.display(), segments.join("::"));
                graph.edges.entry((module.clone(), to)).or_insert(why);
            }
        }
    }
    Ok(graph)
}

/// Every file module under `path` (module path `module`), parsed.
fn collect_files(
    path: &Path,
    module: &str,
    out: &mut Vec<(String, PathBuf, syn::File)>,
) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let file = syn::parse_file(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    // The directory of this module's children: `a/` beside `a.rs`, or the
    // directory of `mod.rs`, `lib.rs` and `main.rs`.
    let dir = match path.file_name().and_then(|n| n.to_str()) {
        Some("mod.rs" | "lib.rs" | "main.rs") => path.parent().unwrap_or(Path::new("")).into(),
        _ => path.with_extension(""),
    };
    let mut children = Vec::new();
    file_modules(&file.items, &dir, module, &mut children);
    out.push((module.to_string(), path.to_path_buf(), file));
    for (child, child_path) in children {
        collect_files(&child_path, &child, out)?;
    }
    Ok(())
}

/// The `mod name;` declarations in `items` (and in the inline modules
/// among them), with the module path and file of each; test modules left
/// out.
fn file_modules(items: &[syn::Item], dir: &Path, module: &str, out: &mut Vec<(String, PathBuf)>) {
    for item in items {
        let syn::Item::Mod(m) = item else { continue };
        if is_test_only(&m.attrs) {
            continue;
        }
        let name = m.ident.to_string();
        let child = join(module, &name);
        match &m.content {
            Some((_, inner)) => file_modules(inner, &dir.join(&name), &child, out),
            None => {
                let flat = dir.join(format!("{name}.rs"));
                let nested = dir.join(&name).join("mod.rs");
                out.push((child, if flat.exists() { flat } else { nested }));
            }
        }
    }
}

/// `a::b` from `a` and `b` (`b` alone from the root, `""`).
fn join(module: &str, name: &str) -> String {
    if module.is_empty() {
        name.to_string()
    } else {
        format!("{module}::{name}")
    }
}

/// True if `a` is `b` or one of its ancestors (the root is everyone's).
fn is_ancestor(a: &str, b: &str) -> bool {
    a.is_empty() || a == b || b.starts_with(&format!("{a}::"))
}

/// The parent of a module path (`None` for the root).
fn parent(module: &str) -> Option<&str> {
    if module.is_empty() {
        return None;
    }
    Some(module.rsplit_once("::").map_or("", |(p, _)| p))
}

/// The module a path names, from inside `scope`: the deepest known module
/// along it; `None` for a path that leaves the crate (another crate, a
/// local name, a `super` past the root).
fn resolve(
    modules: &BTreeMap<String, PathBuf>,
    scope: &str,
    segments: &[String],
) -> Option<String> {
    let mut rest = segments.iter().peekable();
    let mut base = match rest.peek().map(|s| s.as_str()) {
        Some("crate") => {
            rest.next();
            String::new()
        }
        Some("self") => {
            rest.next();
            scope.to_string()
        }
        Some("super") => {
            let mut base = scope.to_string();
            while rest.peek().is_some_and(|s| *s == "super") {
                rest.next();
                base = parent(&base)?.to_string();
            }
            base
        }
        // `child::item`: a child module of the scope, named directly.
        Some(first) if modules.contains_key(&join(scope, first)) => scope.to_string(),
        _ => return None,
    };
    for segment in rest {
        let deeper = join(&base, segment);
        if !modules.contains_key(&deeper) {
            break;
        }
        base = deeper;
    }
    // An inline module is part of its file's node.
    while !modules.contains_key(&base) {
        base = parent(&base)?.to_string();
    }
    Some(base)
}

/// True for `#[cfg(test)]` (and `#[cfg(all(test, ...))]`).
fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.meta
                .require_list()
                .is_ok_and(|l| l.tokens.clone().into_iter().any(|t| is_ident(&t, "test")))
    })
}

fn is_ident(t: &TokenTree, name: &str) -> bool {
    matches!(t, TokenTree::Ident(i) if i == name)
}

/// The attributes of an item (empty for kinds that have none).
fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    use syn::Item;
    match item {
        Item::Const(i) => &i.attrs,
        Item::Enum(i) => &i.attrs,
        Item::ExternCrate(i) => &i.attrs,
        Item::Fn(i) => &i.attrs,
        Item::ForeignMod(i) => &i.attrs,
        Item::Impl(i) => &i.attrs,
        Item::Macro(i) => &i.attrs,
        Item::Mod(i) => &i.attrs,
        Item::Static(i) => &i.attrs,
        Item::Struct(i) => &i.attrs,
        Item::Trait(i) => &i.attrs,
        Item::TraitAlias(i) => &i.attrs,
        Item::Type(i) => &i.attrs,
        Item::Union(i) => &i.attrs,
        Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

/// The paths named in one file, each with the module it is written in.
struct Paths {
    /// The module the visitor is in (an inline module deepens it).
    scope: String,
    paths: Vec<(String, Vec<String>)>,
}

impl Paths {
    fn add(&mut self, segments: Vec<String>) {
        if !segments.is_empty() {
            self.paths.push((self.scope.clone(), segments));
        }
    }

    /// The paths of a `use` tree, each ending at a name, a `self` or a `*`.
    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let mut path = prefix.clone();
                path.push(n.ident.to_string());
                self.add(path);
            }
            syn::UseTree::Rename(r) => {
                let mut path = prefix.clone();
                path.push(r.ident.to_string());
                self.add(path);
            }
            syn::UseTree::Glob(_) => self.add(prefix.clone()),
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    self.use_tree(prefix, tree);
                }
            }
        }
    }

    /// Paths inside the tokens of a macro call: `crate`, `super` or `self`
    /// followed by `::` and names.
    fn tokens(&mut self, tokens: TokenStream) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < tokens.len() {
            if let TokenTree::Group(g) = &tokens[i] {
                self.tokens(g.stream());
                i += 1;
                continue;
            }
            let starts = ["crate", "super", "self"]
                .iter()
                .any(|k| is_ident(&tokens[i], k));
            if !starts {
                i += 1;
                continue;
            }
            let mut path = Vec::new();
            let mut j = i;
            while let Some(TokenTree::Ident(ident)) = tokens.get(j) {
                path.push(ident.to_string());
                // `::` is two `:` punctuation tokens.
                let colons = matches!(
                    (tokens.get(j + 1), tokens.get(j + 2)),
                    (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
                        if a.as_char() == ':' && b.as_char() == ':'
                );
                if !colons {
                    break;
                }
                j += 3;
            }
            i = j + 1;
            self.add(path);
        }
    }
}

impl<'ast> Visit<'ast> for Paths {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        if is_test_only(item_attrs(item)) {
            return;
        }
        match item {
            // A file module is its own node: only inline ones are entered.
            syn::Item::Mod(m) => {
                if let Some((_, items)) = &m.content {
                    let inner = join(&self.scope, &m.ident.to_string());
                    let outer = std::mem::replace(&mut self.scope, inner);
                    for item in items {
                        self.visit_item(item);
                    }
                    self.scope = outer;
                }
            }
            syn::Item::Use(u) => self.use_tree(&mut Vec::new(), &u.tree),
            _ => syn::visit::visit_item(self, item),
        }
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !is_test_only(&f.attrs) {
            syn::visit::visit_impl_item_fn(self, f);
        }
    }

    /// A path of one name in code (`inputs`, `Output`) is a local, a
    /// type or a function, never a module: only longer paths are kept, so
    /// that a variable named like a child module is no edge to it.
    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.segments.len() > 1 {
            self.add(path.segments.iter().map(|s| s.ident.to_string()).collect());
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.tokens(mac.tokens.clone());
        syn::visit::visit_macro(self, mac);
    }

    /// An attribute's arguments are tokens too: `#[arg(value_parser =
    /// crate::next::parse_since)]` makes an edge like a call would.
    fn visit_attribute(&mut self, attr: &'ast syn::Attribute) {
        if let syn::Meta::List(list) = &attr.meta {
            self.tokens(list.tokens.clone());
        }
        syn::visit::visit_attribute(self, attr);
    }
}

/// The circles of a graph (strongly connected sets of two or more
/// modules), each sorted, biggest first.
pub fn circles(graph: &Graph) -> Vec<Vec<String>> {
    let names: Vec<&String> = graph.modules.keys().collect();
    let index: BTreeMap<&String, usize> = names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let mut next = vec![Vec::new(); names.len()];
    for (from, to) in graph.edges.keys() {
        next[index[from]].push(index[to]);
    }
    let mut out: Vec<Vec<String>> = strongly_connected(&next)
        .into_iter()
        .filter(|set| set.len() > 1)
        .map(|set| {
            let mut set: Vec<String> = set.into_iter().map(|i| names[i].clone()).collect();
            set.sort();
            set
        })
        .collect();
    out.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
    out
}

/// Tarjan's algorithm, without recursion: the strongly connected sets of
/// the graph whose edges from node `i` are `next[i]`.
fn strongly_connected(next: &[Vec<usize>]) -> Vec<Vec<usize>> {
    const UNSEEN: usize = usize::MAX;
    let n = next.len();
    let (mut order, mut low) = (vec![UNSEEN; n], vec![0; n]);
    let mut on_stack = vec![false; n];
    let (mut stack, mut sets, mut counter) = (Vec::new(), Vec::new(), 0);
    for start in 0..n {
        if order[start] != UNSEEN {
            continue;
        }
        // (node, index of the next edge to follow)
        let mut calls = vec![(start, 0)];
        while let Some(&mut (v, ref mut edge)) = calls.last_mut() {
            if *edge == 0 && order[v] == UNSEEN {
                order[v] = counter;
                low[v] = counter;
                counter += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            if let Some(&w) = next[v].get(*edge) {
                *edge += 1;
                if order[w] == UNSEEN {
                    calls.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(order[w]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(parent, _)) = calls.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == order[v] {
                let mut set = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    set.push(w);
                    if w == v {
                        break;
                    }
                }
                sets.push(set);
            }
        }
    }
    sets
}

/// The leaf folders of the workspace's crates: (crate root, folder
/// module). Only the crate root and a command's own files may name a
/// module under the folder (see [`leaf_breaches`]).
pub const LEAVES: &[(&str, &str)] = &[("segmenter/src/lib.rs", "commands")];

/// The edges of `graph` into the leaf folder `leaf` that break its rule,
/// as `from -> to  (file: path)`: every edge to `leaf` or a module under
/// it, except those from the crate root (the dispatch) and those between
/// the files of one leaf (`commands::report::page` naming
/// `commands::report::gather`). A leaf naming another leaf is a breach.
pub fn leaf_breaches(graph: &Graph, leaf: &str) -> Vec<String> {
    let under = format!("{leaf}::");
    // The leaf a module belongs to: `commands::report` for
    // `commands::report::page`; `None` outside the folder.
    let leaf_of = |module: &str| {
        let rest = module.strip_prefix(&under)?;
        Some(rest.split("::").next().unwrap_or(rest).to_string())
    };
    let mut out = Vec::new();
    for ((from, to), why) in &graph.edges {
        let into = to == leaf || to.starts_with(&under);
        let same_leaf = leaf_of(from).is_some() && leaf_of(from) == leaf_of(to);
        if into && !from.is_empty() && !same_leaf {
            out.push(format!("{from} -> {to}  ({why})"));
        }
    }
    out
}

/// The circles of a graph as text: each circle's modules, and the edges
/// that close it with one place each.
pub fn describe(graph: &Graph, circles: &[Vec<String>]) -> String {
    let mut text = String::new();
    for circle in circles {
        let members: BTreeSet<&String> = circle.iter().collect();
        text.push_str(&format!(
            "circle of {}: {}\n",
            circle.len(),
            circle.join(", ")
        ));
        for ((from, to), why) in &graph.edges {
            if members.contains(from) && members.contains(to) {
                text.push_str(&format!("  {from} -> {to}  ({why})\n"));
            }
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A crate of the given files (`lib.rs` first) in a fresh directory.
    fn write_crate(name: &str, files: &[(&str, &str)]) -> crate::TempDir {
        let dir = crate::TempDir::new(&format!("modgraph-{name}"));
        for (path, text) in files {
            let path = dir.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    fn circles_of(name: &str, files: &[(&str, &str)]) -> Vec<Vec<String>> {
        let dir = write_crate(name, files);
        let graph = read_crate(&dir.join("lib.rs")).unwrap();
        circles(&graph)
    }

    #[test]
    fn each_kind_of_path_is_an_edge() {
        let lib = "mod a; mod b; mod c; mod d; mod e;";
        let cases = [
            ("use", "use crate::b::X;", "pub struct X;"),
            ("expression", "fn f() { crate::b::g(); }", "pub fn g() {}"),
            ("type", "struct S(crate::b::X);", "pub struct X;"),
            ("glob", "use crate::b::*;", "pub struct X;"),
            ("group", "use crate::{c::Y, b::X};", "pub struct X;"),
            (
                "macro",
                "fn f() { println!(\"{}\", crate::b::N); }",
                "pub const N: u8 = 1;",
            ),
            (
                "attribute",
                "struct S { #[arg(value_parser = crate::b::parse)] x: u8 }",
                "pub fn parse() {}",
            ),
        ];
        for (kind, a, b) in cases {
            let back = "use crate::a::*;";
            let found = circles_of(
                kind,
                &[
                    ("lib.rs", lib),
                    ("a.rs", a),
                    ("b.rs", &format!("{b}\n{back}")),
                    ("c.rs", "pub struct Y;"),
                    ("d.rs", ""),
                    ("e.rs", ""),
                ],
            );
            assert_eq!(found, [["a", "b"]], "{kind}");
        }
    }

    #[test]
    fn super_and_child_paths_resolve_to_the_module_they_name() {
        let found = circles_of(
            "super",
            &[
                ("lib.rs", "mod scan; mod report;"),
                (
                    "scan/mod.rs",
                    "mod lists; pub const KINDS: u8 = 1; use lists::read;",
                ),
                (
                    "scan/lists.rs",
                    "pub fn read() { super::super::report::f(); }",
                ),
                ("report.rs", "pub fn f() { let _ = crate::scan::KINDS; }"),
            ],
        );
        assert_eq!(found, [["report", "scan", "scan::lists"]]);
    }

    #[test]
    fn test_code_and_declarations_are_not_edges() {
        let found = circles_of(
            "tests",
            &[
                ("lib.rs", "mod a; mod b;"),
                (
                    "a.rs",
                    "pub fn f() {}\n#[cfg(test)]\nmod tests { use crate::b::g; }",
                ),
                ("b.rs", "pub fn g() { crate::a::f(); }"),
            ],
        );
        assert!(found.is_empty(), "{found:?}");
        // A parent that only declares a child, which uses the parent: no circle.
        let found = circles_of(
            "declare",
            &[
                ("lib.rs", "mod a; pub struct X;"),
                ("a.rs", "use super::X;"),
            ],
        );
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn a_local_named_like_a_child_module_is_no_edge() {
        let dir = write_crate(
            "local",
            &[
                ("lib.rs", "mod a;"),
                ("a.rs", "mod b; fn f(b: u8) -> u8 { b }"),
                ("a/b.rs", "pub fn g() {}"),
            ],
        );
        let graph = read_crate(&dir.join("lib.rs")).unwrap();
        assert!(graph.edges.is_empty(), "{:?}", graph.edges);
    }

    #[test]
    fn only_the_root_and_a_commands_own_files_name_a_command() {
        let files = |round: &'static str, run: &'static str| {
            [
                (
                    "lib.rs",
                    "mod commands; mod round; fn execute() { commands::run::run(); }",
                ),
                ("commands.rs", "mod report; mod run;"),
                ("commands/run.rs", run),
                (
                    "commands/report.rs",
                    "mod gather; mod page; pub fn report() {}",
                ),
                ("commands/report/page.rs", "use super::gather::Rows;"),
                ("commands/report/gather.rs", "pub struct Rows;"),
                ("round.rs", round),
            ]
        };
        let breaches = |name: &str, files: &[(&str, &str)]| {
            let dir = write_crate(name, files);
            leaf_breaches(&read_crate(&dir.join("lib.rs")).unwrap(), "commands")
        };
        let clean = files("pub fn go() {}", "pub fn run() { crate::round::go(); }");
        assert!(breaches("leaf-clean", &clean).is_empty());
        let from_below = files(
            "pub fn go() { crate::commands::report::report(); }",
            "pub fn run() { crate::round::go(); }",
        );
        let found = breaches("leaf-below", &from_below);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with("round -> commands::report  ("),
            "{found:?}"
        );
        let between = files("pub fn go() {}", "use crate::commands::report::report;");
        let found = breaches("leaf-between", &between);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with("commands::run -> commands::report  ("),
            "{found:?}"
        );
    }

    #[test]
    fn no_module_imports_a_command() {
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut failures = String::new();
        for (root, leaf) in LEAVES {
            let graph = read_crate(&workspace.join(root)).unwrap();
            assert!(
                graph.modules.contains_key(*leaf),
                "{root}: no module `{leaf}` (update LEAVES)"
            );
            for breach in leaf_breaches(&graph, leaf) {
                failures.push_str(&format!("{root}: {breach}\n"));
            }
        }
        assert!(
            failures.is_empty(),
            "a command module is named by a module other than the crate root (move what is \
             shared into the crawl state or the round it reads):\n{failures}"
        );
    }

    #[test]
    fn no_crate_has_a_module_circle() {
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let roots = [
            "common/src/lib.rs",
            "fetcher/src/lib.rs",
            "fetcher/src/main.rs",
            "segmenter/src/lib.rs",
            "segmenter/src/main.rs",
            "tests/src/lib.rs",
        ];
        let mut failures = String::new();
        for root in roots {
            let graph = read_crate(&workspace.join(root)).unwrap();
            assert!(
                graph.modules.len() > 1 || root.ends_with("main.rs"),
                "{root}: no module found"
            );
            let found = circles(&graph);
            if !found.is_empty() {
                failures.push_str(&format!("{root}:\n{}", describe(&graph, &found)));
            }
        }
        assert!(
            failures.is_empty(),
            "import circles between modules (move the shared piece to where it belongs):\n{failures}"
        );
    }

    /// One folder convention: a folder's module is `foo.rs` beside `foo/`,
    /// never `foo/mod.rs`.
    #[test]
    fn every_folder_module_is_a_file_beside_its_folder() {
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut found = Vec::new();
        let mut dirs: Vec<PathBuf> = ["common", "fetcher", "segmenter", "tests"]
            .iter()
            .flat_map(|c| {
                [
                    workspace.join(c).join("src"),
                    workspace.join(c).join("tests"),
                ]
            })
            .filter(|d| d.is_dir())
            .collect();
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.file_name() == Some("mod.rs".as_ref()) {
                    found.push(path.strip_prefix(&workspace).unwrap().display().to_string());
                }
            }
        }
        found.sort();
        assert!(
            found.is_empty(),
            "a folder's module is `foo.rs` beside `foo/` in this workspace; rename these \
             (`git mv foo/mod.rs foo.rs`): {found:?}"
        );
    }
}

//! The MR catalogue: relations, generators, checks and `mfr_*` reduction functions read from the
//! spec headers a test includes (design §3).
//!
//! Headers are found by following the test's quoted `#include`s in *both* branches of
//! `#ifdef EXECUTE`, relative to the including file's directory and then each `-I DIR`, plus any
//! `--spec FILE`. Each MR remembers whether the `EXECUTE` build (the one that runs) sees it, so
//! that folding only ever targets a base MR that exists at run time.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::Serialize;

use crate::document::{squeeze, Branch, Document, Function, Param, StmtKind};

/// Relation or generator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MrKind {
    /// `metalib::relations::…`
    Relation,
    /// `metalib::generators::…`
    Generator,
}

impl MrKind {
    /// The namespace name.
    pub fn namespace(self) -> &'static str {
        match self {
            MrKind::Relation => "relations",
            MrKind::Generator => "generators",
        }
    }
}

/// A metamorphic relation or generator of the spec.
#[derive(Clone, Debug, Serialize)]
pub struct Mr {
    /// Relation or generator.
    pub kind: MrKind,
    /// Family namespace.
    pub family: String,
    /// Unqualified name.
    pub name: String,
    /// Return type text.
    pub return_type: String,
    /// Parameter type texts.
    pub params: Vec<String>,
    /// No `placeholder` call in its body (MF++'s "base").
    pub is_base: bool,
    /// Calls `fuzz_new` (needs its own region when transplanted).
    pub has_fuzz: bool,
    /// Visible to the `EXECUTE` build.
    pub executable: bool,
    /// Families of the placeholders its body calls, in call order.
    pub placeholder_families: Vec<(MrKind, String)>,
    /// For an MR whose body is only `return <parameter>;`: that parameter's index (the MR is an
    /// identity, and so is every MR of a family whose base is one).
    pub identity_arg: Option<usize>,
}

impl Mr {
    /// `metalib::<kind>::<family>::<name>`.
    pub fn qualified(&self) -> String {
        format!(
            "metalib::{}::{}::{}",
            self.kind.namespace(),
            self.family,
            self.name
        )
    }
}

/// A fuzz reduction function `mfr_<type>`.
#[derive(Clone, Debug, Serialize)]
pub struct ReductionFn {
    /// Qualified name as it can be called.
    pub name: String,
    /// Return type text (the fuzzed type it reduces).
    pub return_type: String,
    /// Parameters (filled with context variables of matching type).
    pub param_types: Vec<String>,
    /// Visible to the `EXECUTE` build.
    pub executable: bool,
}

/// Everything mfppr knows about the spec.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Catalogue {
    /// Relations and generators, in declaration order.
    pub mrs: Vec<Mr>,
    /// Check names.
    pub checks: Vec<String>,
    /// Reduction functions.
    pub reducers: Vec<ReductionFn>,
    /// Headers read.
    pub headers: Vec<PathBuf>,
    /// The identifiers the headers of the `EXECUTE` build name in their code: a `#define` of the
    /// test whose name is one of them is read by the build that runs (issue 60).
    #[serde(skip)]
    pub execute_names: BTreeSet<String>,
    /// Quoted includes that were not found.
    pub missing: Vec<String>,
    /// The same includes with where they come from and where they were looked for.
    pub missing_includes: Vec<MissingInclude>,
}

/// A quoted include found in no search directory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MissingInclude {
    /// The name as written between the quotes.
    pub name: String,
    /// The file whose `#include` names it.
    pub included_from: PathBuf,
    /// The directories searched, in order: the including file's, then the include directories.
    pub searched: Vec<PathBuf>,
}

fn is_placeholder(callee: &str) -> bool {
    callee.rsplit("::").next() == Some("placeholder")
}

/// Family of a placeholder call `[metalib::]<kind>::<family>::placeholder`.
fn placeholder_family(callee: &str) -> Option<(MrKind, String)> {
    let parts: Vec<&str> = callee.split("::").filter(|p| !p.is_empty()).collect();
    if parts.len() < 3 {
        return None;
    }
    let family = parts[parts.len() - 2];
    let kind = match parts[parts.len() - 3] {
        "relations" => MrKind::Relation,
        "generators" => MrKind::Generator,
        _ => return None,
    };
    Some((kind, family.to_string()))
}

/// Fail when an `-I` directory or a `--spec` header does not exist.
fn check_search_paths(include_dirs: &[PathBuf], specs: &[PathBuf]) -> Result<()> {
    for dir in include_dirs {
        if !dir.is_dir() {
            bail!(
                "include directory {} does not exist (check the -I argument)",
                dir.display()
            );
        }
    }
    for spec in specs {
        if !spec.is_file() {
            bail!(
                "spec header {} does not exist (check the --spec argument)",
                spec.display()
            );
        }
    }
    Ok(())
}

/// The headers a test includes, transitively, each read once.
#[derive(Default)]
struct Headers {
    /// (header, branch) pairs still to read; a header seen from several branches merges them.
    queue: VecDeque<(PathBuf, Branch)>,
    /// The branches each header was reached from.
    seen: HashMap<PathBuf, HashSet<Branch>>,
    /// The outline of each header read.
    parsed: HashMap<PathBuf, crate::document::Outline>,
    /// The identifiers of each header read ([`crate::cpp_text::identifiers`]).
    names: HashMap<PathBuf, BTreeSet<String>>,
    /// The headers in the order they were first read.
    order: Vec<PathBuf>,
    /// Includes found in no search directory.
    missing: Vec<MissingInclude>,
}

impl Headers {
    /// Queue the include `path` (reached on `branch`) of the file `from`, or note it missing.
    fn include(&mut self, path: &str, branch: Branch, from: &Path, include_dirs: &[PathBuf]) {
        let dir = from.parent().unwrap_or(Path::new(""));
        match resolve_include(path, dir, include_dirs) {
            Some(p) => self.queue.push_back((p, branch)),
            // A library header on the compiler's own path: not a spec, not read.
            None if crate::compiler::find(path).is_some() => {}
            None if self.missing.iter().any(|m| m.name == path) => {}
            None => {
                let mut searched = vec![dir.to_path_buf()];
                for d in include_dirs {
                    if !searched.contains(d) {
                        searched.push(d.clone());
                    }
                }
                self.missing.push(MissingInclude {
                    name: path.to_string(),
                    included_from: from.to_path_buf(),
                    searched,
                });
            }
        }
    }

    /// Read every queued header and, transitively, what it includes.
    fn read_all(&mut self, include_dirs: &[PathBuf]) -> Result<()> {
        while let Some((path, branch)) = self.queue.pop_front() {
            let path = path.canonicalize().unwrap_or(path);
            let branches = self.seen.entry(path.clone()).or_default();
            if !branches.insert(branch) {
                continue;
            }
            if !self.parsed.contains_key(&path) {
                let bytes = std::fs::read(&path)
                    .with_context(|| format!("cannot read spec header {}", path.display()))?;
                let names = crate::cpp_text::identifiers(&bytes).into_iter().collect();
                self.names.insert(path.clone(), names);
                let outline = Document::parse(bytes)?.outline().clone();
                self.parsed.insert(path.clone(), outline);
                self.order.push(path.clone());
            }
            let includes: Vec<(String, Branch)> = self.parsed[&path]
                .includes
                .iter()
                .filter(|i| !i.system)
                .map(|i| (i.path.clone(), branch_nest(branch, i.branch)))
                .collect();
            for (inc, nested) in includes {
                self.include(&inc, nested, &path, include_dirs);
            }
        }
        Ok(())
    }
}

impl Catalogue {
    /// Read the spec headers reachable from the test at `test_path` (whose bytes are
    /// `test_text`), searching `include_dirs`, plus `specs`.
    ///
    /// When `include_dirs` or `specs` are given explicitly, finding no MR at all is an error that
    /// names the headers that could not be found.
    pub fn load(
        test_path: &Path,
        test_text: &[u8],
        include_dirs: &[PathBuf],
        specs: &[PathBuf],
    ) -> Result<Catalogue> {
        let test_doc = Document::parse(test_text.to_vec())?;
        Catalogue::load_for(test_path, &test_doc, include_dirs, specs)
    }

    /// Like [`Catalogue::load`], for a test already parsed.
    pub fn load_for(
        test_path: &Path,
        test_doc: &Document,
        include_dirs: &[PathBuf],
        specs: &[PathBuf],
    ) -> Result<Catalogue> {
        check_search_paths(include_dirs, specs)?;
        let test_path = std::path::absolute(test_path).unwrap_or_else(|_| test_path.to_path_buf());
        let test_outline = test_doc.outline();
        let mut headers = Headers::default();
        for inc in test_outline.includes.iter().filter(|i| !i.system) {
            headers.include(&inc.path, inc.branch, &test_path, include_dirs);
        }
        for spec in specs {
            headers.queue.push_back((spec.clone(), Branch::Both));
        }
        headers.read_all(include_dirs)?;
        let mut cat = Catalogue::default();
        for path in &headers.order {
            let executable_header = headers.seen[path]
                .iter()
                .any(|b| matches!(b, Branch::Both | Branch::Execute));
            cat.add_functions(&headers.parsed[path].functions, executable_header);
            if executable_header {
                cat.execute_names
                    .extend(headers.names[path].iter().cloned());
            }
        }
        // Reduction functions may also be defined in the test's own preamble.
        cat.add_functions(&test_outline.functions, true);
        let mut missing: Vec<String> = headers.missing.iter().map(|m| m.name.clone()).collect();
        missing.sort();
        cat.missing = missing;
        cat.missing_includes = headers.missing;
        cat.headers = headers.order;
        if cat.mrs.is_empty() && (!include_dirs.is_empty() || !specs.is_empty()) {
            bail!(
                "no MF++ spec found for {}: none of its headers defines a metalib MR{}",
                test_path.display(),
                if cat.missing_includes.is_empty() {
                    " (all were found); give the spec header with --spec FILE".to_string()
                } else {
                    format!(
                        "; not found: {}; {FIX}",
                        describe_missing(&cat.missing_includes)
                    )
                }
            );
        }
        Ok(cat)
    }

    fn add_functions(&mut self, functions: &[Function], executable_header: bool) {
        for f in functions {
            let executable = executable_header && f.branch != Branch::NotExecute;
            let ns: Vec<&str> = f.namespaces.iter().map(String::as_str).collect();
            match ns.as_slice() {
                ["metalib", "checks", ..] => {
                    if !self.checks.contains(&f.name) {
                        self.checks.push(f.name.clone());
                    }
                }
                ["metalib", kind @ ("relations" | "generators"), family] => {
                    if f.name == "placeholder" {
                        continue;
                    }
                    let kind = if *kind == "relations" {
                        MrKind::Relation
                    } else {
                        MrKind::Generator
                    };
                    let placeholder_families = f
                        .calls
                        .iter()
                        .filter(|c| is_placeholder(&c.callee))
                        .filter_map(|c| placeholder_family(&c.callee))
                        .collect::<Vec<_>>();
                    let is_base = !f.calls.iter().any(|c| is_placeholder(&c.callee));
                    let has_fuzz = f.calls.iter().any(|c| {
                        // `fuzz::fuzz_new<fuzz::set_term>`: the name before its template arguments.
                        let name = c.callee.split('<').next().unwrap_or("");
                        let last = name.rsplit("::").next().unwrap_or("");
                        last.starts_with("fuzz_new") || last.starts_with("fuzz_rand")
                    });
                    let params = f.params.iter().map(|p| p.type_text.clone()).collect();
                    if let Some(existing) = self
                        .mrs
                        .iter_mut()
                        .find(|m| m.kind == kind && m.family == *family && m.name == f.name)
                    {
                        existing.executable |= executable;
                        continue;
                    }
                    self.mrs.push(Mr {
                        kind,
                        family: family.to_string(),
                        name: f.name.clone(),
                        return_type: f.return_type.clone(),
                        params,
                        is_base,
                        has_fuzz,
                        executable,
                        placeholder_families,
                        identity_arg: identity_arg(f),
                    });
                }
                _ => {
                    if f.name.starts_with("mfr_")
                        && f.name != "mfr_fuzz_start"
                        && f.name != "mfr_fuzz_end"
                    {
                        let name = if f.namespaces.is_empty() {
                            f.name.clone()
                        } else {
                            format!("{}::{}", f.namespaces.join("::"), f.name)
                        };
                        if let Some(r) = self.reducers.iter_mut().find(|r| r.name == name) {
                            r.executable |= executable;
                            continue;
                        }
                        self.reducers.push(ReductionFn {
                            name,
                            return_type: f.return_type.clone(),
                            param_types: f.params.iter().map(param_type).collect(),
                            executable,
                        });
                    }
                }
            }
        }
    }

    /// Whether any MR is called `name`.
    pub fn has_mr_named(&self, name: &str) -> bool {
        self.mrs.iter().any(|m| m.name == name)
    }

    /// The MR `name` of family `family`.
    pub fn mr(&self, kind: MrKind, family: &str, name: &str) -> Option<&Mr> {
        self.mrs
            .iter()
            .find(|m| m.kind == kind && m.family == family && m.name == name)
    }

    /// The families having an MR called `name`.
    pub fn families_of(&self, name: &str) -> Vec<(MrKind, String)> {
        let mut out: Vec<(MrKind, String)> = self
            .mrs
            .iter()
            .filter(|m| m.name == name)
            .map(|m| (m.kind, m.family.clone()))
            .collect();
        out.dedup();
        out
    }

    /// The MR an instance of `name` instantiates: by name, then by signature, then by the
    /// families the caller's MR (`caller_mr`) calls placeholders of.
    pub fn resolve(
        &self,
        name: &str,
        return_type: &str,
        param_types: &[String],
        caller_mr: Option<&str>,
    ) -> Option<&Mr> {
        let by_name: Vec<&Mr> = self.mrs.iter().filter(|m| m.name == name).collect();
        if by_name.len() <= 1 {
            return by_name.first().copied();
        }
        let rt = squeeze(return_type);
        let by_sig: Vec<&Mr> = by_name
            .iter()
            .copied()
            .filter(|m| squeeze(&m.return_type) == rt && m.params == param_types)
            .collect();
        if by_sig.len() == 1 {
            return Some(by_sig[0]);
        }
        let pool = if by_sig.is_empty() { by_name } else { by_sig };
        let caller_families: Vec<(MrKind, String)> = caller_mr
            .map(|c| {
                self.mrs
                    .iter()
                    .filter(|m| m.name == c)
                    .flat_map(|m| m.placeholder_families.iter().cloned())
                    .collect()
            })
            .unwrap_or_default();
        let by_caller: Vec<&Mr> = pool
            .iter()
            .copied()
            .filter(|m| caller_families.contains(&(m.kind, m.family.clone())))
            .collect();
        if by_caller.len() == 1 {
            return Some(by_caller[0]);
        }
        None
    }

    /// The base MR to fold a call of family `family` to: visible to the `EXECUTE` build, without
    /// placeholder or fuzz call; `base` by name when there is one, else the first declared.
    pub fn base_of(&self, kind: MrKind, family: &str) -> Option<&Mr> {
        let mut bases = self.mrs.iter().filter(|m| {
            m.kind == kind && m.family == family && m.is_base && !m.has_fuzz && m.executable
        });
        let first = bases.clone().next();
        bases.find(|m| m.name == "base").or(first)
    }

    /// The reduction function for values of type `type_text`.
    pub fn reducer_for(&self, type_text: &str) -> Option<&ReductionFn> {
        let t = squeeze(type_text);
        let last = |s: &str| s.rsplit("::").next().unwrap_or("").to_string();
        self.reducers
            .iter()
            .filter(|r| r.executable)
            .find(|r| squeeze(&r.return_type) == t)
            .or_else(|| {
                self.reducers
                    .iter()
                    .filter(|r| r.executable)
                    .find(|r| last(&squeeze(&r.return_type)) == last(&t))
            })
    }

    /// Whether `callee` is one of the reduction functions.
    pub fn is_reduction_fn(&self, callee: &str) -> bool {
        let last = callee.rsplit("::").next().unwrap_or(callee);
        last.starts_with("mfr_") && last != "mfr_fuzz_start" && last != "mfr_fuzz_end"
    }
}

/// The index of the parameter `f` returns when its body is only `return <parameter>;`.
fn identity_arg(f: &Function) -> Option<usize> {
    let [stmt] = f.body.as_slice() else {
        return None;
    };
    let [(name, _)] = stmt.idents.as_slice() else {
        return None;
    };
    if stmt.kind != StmtKind::Other || !stmt.calls.is_empty() {
        return None;
    }
    f.params.iter().position(|p| &p.name == name)
}

/// How to add a search directory on the command line.
const FIX: &str = "add the directory that holds each after the other arguments with `-- -I DIR` \
                   (the compiler's flags, as MF++'s generator takes them) or with `-I DIR`";

/// `"a", "b" (included from F; searched D1, D2)` for the missing includes, grouped by where they
/// were looked for, groups joined with `; `.
fn describe_missing(missing: &[MissingInclude]) -> String {
    let mut groups: Vec<(&Path, &[PathBuf], Vec<String>)> = Vec::new();
    for m in missing {
        let name = format!("\"{}\"", m.name);
        match groups
            .iter_mut()
            .find(|(from, searched, _)| *from == m.included_from && *searched == m.searched)
        {
            Some((_, _, names)) => names.push(name),
            None => groups.push((&m.included_from, &m.searched, vec![name])),
        }
    }
    groups
        .iter()
        .map(|(from, searched, names)| {
            format!(
                "{} (included from {}; searched {})",
                names.join(", "),
                from.display(),
                searched
                    .iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Whether the catalogue is complete, and what its gaps disable (the `catalogue` object of
/// `--stats`, and the warning printed before reducing).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Completeness {
    /// Every quoted include was found.
    pub complete: bool,
    /// The quoted includes that were not found.
    pub missing: Vec<MissingInclude>,
    /// Spec headers read.
    pub headers: usize,
    /// Relations and generators read.
    pub mrs: usize,
    /// Transplanted instances of the test.
    pub instances: usize,
    /// Instances whose MR family is unknown: recursion folding cannot touch them.
    pub instances_unknown_family: usize,
}

impl Completeness {
    /// The completeness of `catalogue` for a test with `instances` instances, `unknown` of which
    /// have no known MR family.
    pub fn new(catalogue: &Catalogue, instances: usize, unknown: usize) -> Completeness {
        Completeness {
            complete: catalogue.missing_includes.is_empty(),
            missing: catalogue.missing_includes.clone(),
            headers: catalogue.headers.len(),
            mrs: catalogue.mrs.len(),
            instances,
            instances_unknown_family: unknown,
        }
    }

    /// Say an incomplete catalogue before reducing: a warning when its gaps disable something,
    /// else a note, once per process for the same missing includes (a batch says it once, not
    /// once per test); with `strict` (`--strict-spec`) an error (exit 1) instead.
    pub fn say(&self, strict: bool) -> Result<()> {
        let Some(message) = self.message() else {
            return Ok(());
        };
        if strict {
            return Err(crate::error::coded(
                crate::error::ExitKind::Input,
                format!("{message} (--strict-spec)"),
            ));
        }
        if !self.first_time_said() {
            return Ok(());
        }
        if self.disables_something() {
            crate::messages::warn(message);
        } else {
            crate::messages::note(format!("note: {message}"));
        }
        Ok(())
    }

    /// Whether this process has not said these missing includes (with this effect) before: a
    /// campaign says one gap once, not once per test.
    fn first_time_said(&self) -> bool {
        static SAID: std::sync::Mutex<BTreeSet<(Vec<String>, bool)>> =
            std::sync::Mutex::new(BTreeSet::new());
        let mut names: Vec<String> = self.missing.iter().map(|m| m.name.clone()).collect();
        names.sort();
        let key = (names, self.disables_something());
        SAID.lock().map_or(true, |mut said| said.insert(key))
    }

    /// Whether the gaps disable anything mfppr could otherwise do.
    pub fn disables_something(&self) -> bool {
        self.instances_unknown_family > 0 || self.mrs == 0
    }

    /// One line saying what was not found, where mfppr looked, what that disables and the fix;
    /// `None` when the catalogue is complete.
    pub fn message(&self) -> Option<String> {
        if self.complete {
            return None;
        }
        let n = self.instances;
        let effect = if self.instances_unknown_family > 0 {
            format!(
                "MR family unknown for {} of {n} instances, so recursion folding is limited to \
                 {} of {n} instances",
                self.instances_unknown_family,
                n - self.instances_unknown_family
            )
        } else if self.mrs == 0 {
            "no MR was read, so nothing is folded to a base MR".to_string()
        } else {
            format!("the MR families of all {n} instances are known")
        };
        let count = self.missing.len();
        Some(format!(
            "incomplete MR catalogue: {count} quoted include{} not found: {}; {effect}; {FIX}",
            if count == 1 { "" } else { "s" },
            describe_missing(&self.missing)
        ))
    }
}

fn param_type(p: &Param) -> String {
    p.type_text.clone()
}

fn branch_nest(outer: Branch, inner: Branch) -> Branch {
    match (outer, inner) {
        (Branch::Both, b) | (b, Branch::Both) => b,
        (a, b) if a == b => a,
        _ => Branch::NotExecute,
    }
}

fn resolve_include(name: &str, dir: &Path, include_dirs: &[PathBuf]) -> Option<PathBuf> {
    std::iter::once(dir)
        .chain(include_dirs.iter().map(PathBuf::as_path))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) {
        std::fs::write(dir.join(name), text).unwrap();
    }

    #[test]
    fn reads_both_branches_and_marks_what_runs() {
        let d = tempfile::tempdir().unwrap();
        write(
            d.path(),
            "meta.hpp",
            "namespace metalib { namespace checks { void check_eq(T a, T b) {} }\n\
             namespace relations { namespace add { T base(C c, T a, T b) { return a; } } } }\n",
        );
        write(
            d.path(),
            "spec.hpp",
            "namespace metalib { namespace relations { namespace add {\n\
             T placeholder(C, T, T);\n\
             T add_comm(C c, T a, T b) { return relations::add::placeholder(c, b, a); }\n\
             T get_by_fuzz(C c, T a, T b) { T f = fuzz::fuzz_new<T>(); return f; } } } }\n",
        );
        write(d.path(), "reduce.hpp", "T mfr_T(C c) { return T(); }\n");
        let test = "#ifdef EXECUTE\n#include \"meta.hpp\"\n#else\n#include \"meta.hpp\"\n#include \"spec.hpp\"\n#endif\n#include \"reduce.hpp\"\n#include \"lib.h\"\nint main() {}\n";
        let cat = Catalogue::load(&d.path().join("t.cpp"), test.as_bytes(), &[], &[]).unwrap();
        assert_eq!(cat.checks, vec!["check_eq"]);
        let names: Vec<(&str, bool, bool)> = cat
            .mrs
            .iter()
            .map(|m| (m.name.as_str(), m.is_base, m.executable))
            .collect();
        assert_eq!(
            names,
            vec![
                ("base", true, true),
                ("add_comm", false, false),
                ("get_by_fuzz", true, false)
            ]
        );
        assert_eq!(cat.base_of(MrKind::Relation, "add").unwrap().name, "base");
        assert_eq!(
            cat.mrs[1].placeholder_families,
            vec![(MrKind::Relation, "add".to_string())]
        );
        assert_eq!(cat.reducer_for("T").unwrap().name, "mfr_T");
        assert_eq!(cat.missing, vec!["lib.h"]);
    }

    #[test]
    fn missing_includes_say_where_mfppr_looked_and_what_is_lost() {
        let d = tempfile::tempdir().unwrap();
        let inc = d.path().canonicalize().unwrap().join("inc");
        std::fs::create_dir(&inc).unwrap();
        write(
            &inc,
            "defs.hpp",
            "#include \"spec.hpp\"\n#include \"lib.h\"\n",
        );
        let test = d.path().join("t.cpp");
        let cat = Catalogue::load(
            &test,
            b"#include \"defs.hpp\"\nint main() {}\n",
            std::slice::from_ref(&inc),
            &[],
        );
        // No MR at all with an explicit -I: an error naming both headers and the directories.
        let err = format!("{:#}", cat.unwrap_err());
        let from = inc.canonicalize().unwrap().join("defs.hpp");
        assert!(
            err.contains(&format!(
                "\"spec.hpp\", \"lib.h\" (included from {}; searched {})",
                from.display(),
                inc.canonicalize().unwrap().display(),
            )),
            "{err}"
        );
        assert!(err.contains("-- -I DIR"), "{err}");

        let cat = Catalogue::load(&test, b"#include \"defs.hpp\"\n", &[], &[]).unwrap();
        assert_eq!(cat.missing, vec!["defs.hpp"]);
        let c = Completeness::new(&cat, 17, 16);
        assert!(!c.complete && c.disables_something());
        let message = c.message().unwrap();
        assert!(
            message.contains("recursion folding is limited to 1 of 17 instances"),
            "{message}"
        );
        assert!(c.say(true).is_err());
        assert_eq!(
            Completeness::new(&Catalogue::default(), 3, 0).message(),
            None
        );
    }

    #[test]
    fn explicit_include_dir_without_spec_is_an_error() {
        let d = tempfile::tempdir().unwrap();
        let err = Catalogue::load(
            &d.path().join("t.cpp"),
            b"#include \"spec_fuzz.hpp\"\nint main() {}\n",
            &[d.path().to_path_buf()],
            &[],
        )
        .unwrap_err();
        assert!(err.to_string().contains("spec_fuzz.hpp"), "{err}");
    }
}

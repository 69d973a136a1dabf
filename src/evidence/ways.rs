//! The ways the spec gives to compute a call, shared by every look into a result: the library
//! operations a function reaches ([`LibraryOps`], through instances, `metalib` MRs and opened
//! bases), the calls that can be computed another way ([`Target`]), and an MR's definition copied
//! with its placeholders resolved ([`resolved_copy`]). Folding, the knockouts and the value
//! localiser read the test through [`Look`]; none of them reaches into another's internals.

use std::collections::{BTreeSet, HashMap};
use std::rc::Rc;

use crate::catalogue::{Catalogue, MrKind};
use crate::document::{Call, Document, Function};
use crate::edit::{self, Edit};
use crate::model::TestModel;

/// The namespace, inside `metalib`, of the bases the value localiser opens (its copies of a
/// base MR with several library calls, each probed on its own).
pub(crate) const OPEN_NAMESPACE: &str = "mfppr_open";

pub(crate) use crate::case::Compiles;

/// `family::name`, or `name` without a family.
pub(crate) fn mr_name(family: Option<&str>, name: &str) -> String {
    match family {
        Some(f) => format!("{f}::{name}"),
        None => name.to_string(),
    }
}

/// A spec callee written relative to `metalib` (`relations::add::base` inside
/// `metalib::relations::mod`), qualified.
pub(in crate::evidence) fn qualified_in_metalib(callee: &str) -> Option<String> {
    ["relations::", "generators::", "checks::"]
        .iter()
        .any(|p| callee.starts_with(p))
        .then(|| format!("metalib::{callee}"))
}

/// A placeholder call (`metalib::relations::add::placeholder`) as the call of its family's base
/// (`metalib::relations::add::base`), which is what it stands for at run time.
pub(in crate::evidence) fn as_base(callee: &str) -> Option<String> {
    callee
        .strip_suffix("::placeholder")
        .map(|family| format!("{family}::base"))
}

/// The library operation a call names: a qualified function outside the spec (`z3::mod`), or a
/// member function of a library object (`ctx.c.int_val` → `.int_val`) — not a standard
/// container's or string's ([`STD_MEMBERS`]: `ctx.fvs.vars.at` reads a fuzzed input).
pub(crate) fn library_op(callee: &str) -> Option<String> {
    if callee.contains("::") {
        (!callee.starts_with("fuzz::") && !callee.starts_with("metalib::"))
            .then(|| callee.to_string())
    } else {
        let (object, member) = callee.rsplit_once('.')?;
        (!object.is_empty() && !member.is_empty() && !STD_MEMBERS.contains(&member))
            .then(|| format!(".{member}"))
    }
}

/// Member functions of the standard containers and strings MF++ tests call (the fuzzed inputs'
/// vector, names built with `std::string`): never the library's operations.
const STD_MEMBERS: [&str; 12] = [
    "at",
    "push_back",
    "emplace_back",
    "size",
    "empty",
    "begin",
    "end",
    "front",
    "back",
    "c_str",
    "data",
    "length",
];

/// A call's callee, an operator's with the shape of its arguments (`z3::operator-(x)` and
/// `z3::operator-(x,y)` are two library operations: unary minus and subtraction).
pub(in crate::evidence) fn with_arity(call: &crate::document::Call) -> String {
    let name = call.callee.rsplit("::").next().unwrap_or("");
    if !name.starts_with("operator") {
        return call.callee.clone();
    }
    let shape = ["x", "y", "z"][..call.args.len().min(3)].join(",");
    format!("{}({shape})", call.callee)
}

/// A function of the spec: its header's text and its outline there.
pub(in crate::evidence) struct SpecFn {
    pub(in crate::evidence) text: Rc<[u8]>,
    pub(in crate::evidence) function: Function,
}

/// The library operations a function reaches, through instances, the spec's `metalib` MRs (a
/// placeholder reaches its family's base) and the bases the localiser opens.
pub(in crate::evidence) struct LibraryOps {
    /// Callees of each function by qualified name (spec, opened base) or plain name (the
    /// test's).
    pub(in crate::evidence) calls: HashMap<String, Vec<String>>,
    /// The spec's `metalib` functions by qualified name.
    pub(in crate::evidence) spec: HashMap<String, SpecFn>,
}

impl LibraryOps {
    pub(in crate::evidence) fn new(
        text: &[u8],
        model: &TestModel,
        catalogue: &Catalogue,
    ) -> LibraryOps {
        let mut calls: HashMap<String, Vec<String>> = HashMap::new();
        let mut spec = HashMap::new();
        for header in &catalogue.headers {
            let Ok(bytes) = std::fs::read(header) else {
                continue;
            };
            let Ok(doc) = Document::parse(bytes) else {
                continue;
            };
            let header_text: Rc<[u8]> = Rc::from(doc.text());
            for f in &doc.outline().functions {
                if f.namespaces.first().map(String::as_str) != Some("metalib") {
                    continue;
                }
                let name = format!("{}::{}", f.namespaces.join("::"), f.name);
                calls.entry(name.clone()).or_default().extend(
                    f.calls
                        .iter()
                        .map(|c| qualified_in_metalib(&c.callee).unwrap_or(with_arity(c)))
                        .map(|c| as_base(&c).unwrap_or(c)),
                );
                spec.entry(name).or_insert(SpecFn {
                    text: header_text.clone(),
                    function: f.clone(),
                });
            }
        }
        let mut ops = LibraryOps { calls, spec };
        ops.read_test(text, model);
        ops
    }

    /// Take in the callees of the test's instances and of the bases the localiser opened in it
    /// (replacing those of the same names: the spec's headers are read once).
    pub(in crate::evidence) fn read_test(&mut self, text: &[u8], model: &TestModel) {
        let Ok(doc) = Document::parse(text.to_vec()) else {
            return;
        };
        for f in &doc.outline().functions {
            let calls_of = || f.calls.iter().map(with_arity).collect();
            if model.instance(&f.name).is_some() {
                self.calls.insert(f.name.clone(), calls_of());
            } else if f.namespaces == ["metalib", OPEN_NAMESPACE] {
                self.calls.insert(
                    format!("metalib::{}::{}", OPEN_NAMESPACE, f.name),
                    calls_of(),
                );
            }
        }
    }

    pub(in crate::evidence) fn of(&self, callee: &str) -> BTreeSet<String> {
        self.of_except(callee, &BTreeSet::new())
    }

    /// The library operations `callee` reaches, not looking inside the functions `skip` names
    /// (nor counting their operations).
    pub(in crate::evidence) fn of_except(
        &self,
        callee: &str,
        skip: &BTreeSet<String>,
    ) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let mut seen = BTreeSet::new();
        let mut queue = vec![callee.to_string()];
        while let Some(f) = queue.pop() {
            if !seen.insert(f.clone()) {
                continue;
            }
            for c in self.calls.get(&f).into_iter().flatten() {
                if skip.contains(c) {
                    continue;
                }
                if self.calls.contains_key(c) {
                    queue.push(c.clone());
                } else if let Some(op) = library_op(c) {
                    out.insert(op);
                }
            }
        }
        out
    }
}

/// A call longer than this is shown cut.
const SHOWN: usize = 80;

/// What the deeper look reads.
pub(in crate::evidence) struct Look<'a> {
    pub text: &'a [u8],
    pub model: &'a TestModel,
    pub catalogue: &'a Catalogue,
    pub ops: &'a LibraryOps,
}

/// A call that can be computed another way: the family whose base it is, the edit that makes
/// it call `<NAMESPACE>::<mr>` instead (given the MR's name), and its operations.
pub(in crate::evidence) struct Target {
    pub(in crate::evidence) place: String,
    pub(in crate::evidence) call: Call,
    pub(in crate::evidence) kind: MrKind,
    pub(in crate::evidence) family: String,
    pub(in crate::evidence) ops: BTreeSet<String>,
    /// For a wrapped library call, the context to pass first (a base MR call has its own).
    pub(in crate::evidence) whole_call_with: Option<String>,
}

/// The name of `f`'s context parameter (`fuzz::fuzz_context ctx`), if it has one.
pub(in crate::evidence) fn context_param(f: &Function) -> Option<&str> {
    f.params
        .iter()
        .find(|p| p.type_text.ends_with("fuzz_context") && !p.name.is_empty())
        .map(|p| p.name.as_str())
}

/// The MR's definition with each placeholder call calling its family's base instead.
pub(in crate::evidence) fn resolved_copy(spec: &SpecFn) -> String {
    let f = &spec.function;
    let from = f.span.start;
    let edits: Vec<Edit> = f
        .calls
        .iter()
        .filter(|c| c.callee.ends_with("::placeholder"))
        .map(|c| {
            let written = &spec.text[c.callee_span.start..c.callee_span.end];
            let written = String::from_utf8_lossy(written);
            let family = written.trim_end().trim_end_matches("placeholder");
            let span = c.callee_span.start - from..c.callee_span.end - from;
            Edit::replace(span, format!("{family}base"))
        })
        .collect();
    String::from_utf8_lossy(&edit::apply(&spec.text[f.span.clone()], &edits)).into_owned()
}

/// A call's text for the report: whitespace collapsed, cut after [`SHOWN`] characters.
pub(in crate::evidence) fn shown(bytes: &[u8]) -> String {
    let s = String::from_utf8_lossy(bytes)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    match s.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_operations_are_qualified_calls_or_member_calls() {
        assert_eq!(library_op("z3::mod").as_deref(), Some("z3::mod"));
        assert_eq!(library_op("ctx.c.int_val").as_deref(), Some(".int_val"));
        assert_eq!(library_op("ctx.fvs.vars.at"), None);
        assert_eq!(library_op("fuzz::mfr_fuzz_start"), None);
        assert_eq!(library_op("metalib::relations::add::base"), None);
        assert_eq!(library_op("mod_by_sub_2_6"), None);
        assert_eq!(
            qualified_in_metalib("relations::add::placeholder").as_deref(),
            Some("metalib::relations::add::placeholder")
        );
        assert_eq!(qualified_in_metalib("iset::unite"), None);
    }
}

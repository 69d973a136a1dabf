//! Opened bases: a base MR whose body makes several library calls (Z3's `division::base`,
//! `ite(t2 == 0, t1, t1 / t2)`, which no other MR of its family computes; `modulo::base`) names
//! all its operations at once when its value is wrong. In the test the localiser instruments,
//! every call of such a base calls a copy of it defined in the test
//! (`metalib::mfppr_open::relations_division_base`), whose library calls are probed at their own
//! operands like any call in the test's functions (a probed base call computes its own value by
//! the copy): the comparison and the choice that compute a right value clear their operations,
//! and the division is left.
//!
//! Only the text the localiser instruments is opened; the test itself is never changed.

use std::collections::BTreeMap;

use crate::catalogue::{Catalogue, MrKind};
use crate::document::Document;
use crate::edit::{self, Edit};
use crate::evidence::ways::{library_op, LibraryOps, SpecFn, OPEN_NAMESPACE as NAMESPACE};
use crate::model::{parse_qualified_mr, TestModel};

/// A test with the copies of the bases it opens.
pub(super) struct Opened {
    /// The test with the copies defined before its first definition.
    pub text: Vec<u8>,
    pub model: TestModel,
    /// The copy's name of each opened base (`metalib::relations::division::base`).
    pub copies: BTreeMap<String, String>,
}

impl Opened {
    /// The name a call of `callee` calls in the instrumented test: its copy's, when `callee` is
    /// an opened base.
    pub(super) fn callee(&self, callee: &str) -> Option<&str> {
        let (kind, family, "base") = parse_qualified_mr(callee)? else {
            return None;
        };
        let base = format!("metalib::{}::{family}::base", kind.namespace());
        self.copies.get(&base).map(String::as_str)
    }
}

/// `text` with a copy of every opened base it calls defined at `at` (the test's first
/// definition; the probes' runtime goes before them); `None` when it calls no such base. The
/// calls themselves are redirected by the instrumentation ([`Opened::callee`]).
pub(super) fn open_bases(
    text: &[u8],
    at: usize,
    catalogue: &Catalogue,
    ops: &LibraryOps,
) -> anyhow::Result<Option<Opened>> {
    let doc = Document::parse(text.to_vec())?;
    let mut copies = BTreeMap::new();
    let mut definitions = String::new();
    for f in &doc.outline().functions {
        for call in &f.calls {
            let Some((kind, family, "base")) = parse_qualified_mr(&call.callee) else {
                continue;
            };
            let base = format!("metalib::{}::{family}::base", kind.namespace());
            if copies.contains_key(&base) {
                continue;
            }
            let Some(spec) = opened(catalogue, ops, kind, family) else {
                continue;
            };
            let name = format!("{}_{family}_base", kind.namespace());
            definitions.push_str(&copy(spec, &name));
            copies.insert(base, format!("metalib::{NAMESPACE}::{name}"));
        }
    }
    if copies.is_empty() {
        return Ok(None);
    }
    let text = edit::apply(
        text,
        &[Edit::replace(
            at..at,
            format!("namespace metalib {{ namespace {NAMESPACE} {{\n{definitions}}} }}\n"),
        )],
    );
    let model = TestModel::build(&Document::parse(text.clone())?, catalogue)?;
    Ok(Some(Opened {
        text,
        model,
        copies,
    }))
}

/// The spec's definition of base `kind::family::base` when it is opened: every call in its body
/// is a library call, and there are two or more.
fn opened<'o>(
    catalogue: &Catalogue,
    ops: &'o LibraryOps,
    kind: MrKind,
    family: &str,
) -> Option<&'o SpecFn> {
    let base = catalogue
        .base_of(kind, family)
        .filter(|b| b.executable && !b.has_fuzz)?;
    let spec = ops.spec.get(&base.qualified())?;
    let calls = &spec.function.calls;
    (calls.len() >= 2 && calls.iter().all(|c| library_op(&c.callee).is_some())).then_some(spec)
}

/// The base's definition under `name`.
fn copy(spec: &SpecFn, name: &str) -> String {
    let f = &spec.function;
    let text = |r: std::ops::Range<usize>| String::from_utf8_lossy(&spec.text[r]).into_owned();
    format!(
        "{}{name}{}\n",
        text(f.span.start..f.name_span.start),
        text(f.name_span.end..f.span.end)
    )
}

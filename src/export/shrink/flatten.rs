//! Flattening ([`super::Kind::Flatten`]): a spec function alone in its namespace moves to the
//! global one, its qualified uses unqualified (`metalib::checks::check_equal` → `check_equal`).

use anyhow::Result;

use crate::document::declarations::Item;
use crate::document::Document;
use crate::export::refers_to;
use crate::export::simplify::qualified_names;

use super::{qualified, refs_of, Standalone};

/// The keys of [`super::Kind::Flatten`]: the qualified names of the chunks that can move to the
/// global namespace.
pub(super) fn keys(sa: &Standalone) -> Vec<String> {
    (0..sa.chunks.len())
        .filter(|&i| flattenable(sa, i))
        .map(|i| qualified(&sa.chunks[i].decl))
        .collect()
}

/// Move the chunk `key` names to the global namespace; whether it could be.
pub(super) fn apply(out: &mut Standalone, key: &str) -> Result<bool> {
    let Some(i) = (0..out.chunks.len())
        .find(|&i| qualified(&out.chunks[i].decl) == key && flattenable(out, i))
    else {
        return Ok(false);
    };
    flatten(out, i)?;
    Ok(true)
}

/// Whether chunk `i` is a function alone in its (non-global) namespace whose name nothing else
/// declares.
fn flattenable(sa: &Standalone, i: usize) -> bool {
    let d = &sa.chunks[i].decl;
    let Some(name) = d.name.as_deref() else {
        return false;
    };
    !d.namespaces.is_empty()
        && sa.chunks[i].text.contains('(')
        && sa.chunks.iter().enumerate().all(|(j, c)| {
            j == i || (c.decl.namespaces != d.namespaces && c.decl.name.as_deref() != Some(name))
        })
        && !Document::parse(sa.test.clone().into_bytes())
            .map(|doc| {
                doc.declarations()
                    .iter()
                    .any(|it| matches!(it, Item::Declaration(t) if t.name.as_deref() == Some(name)))
            })
            .unwrap_or(true)
}

/// Move chunk `i` to the global namespace, unqualifying the names that mean it.
fn flatten(sa: &mut Standalone, i: usize) -> Result<()> {
    let decl = sa.chunks[i].decl.clone();
    let name = decl.name.clone().unwrap_or_default();
    let unqualify = |text: &str, context: &[String]| -> String {
        let mut out = text.to_string();
        for (span, q) in qualified_names(text).into_iter().rev() {
            let parts: Vec<String> = q
                .trim_start_matches("::")
                .split("::")
                .map(str::to_string)
                .collect();
            if parts.len() > 1 && refers_to(&parts, context, &decl) {
                out.replace_range(span, &name);
            }
        }
        out
    };
    sa.test = unqualify(&sa.test, &[]);
    for c in &mut sa.chunks {
        c.text = unqualify(&c.text, &c.decl.namespaces);
    }
    sa.chunks[i].decl.namespaces.clear();
    for c in &mut sa.chunks {
        c.decl.refs = refs_of(&c.text).unwrap_or_else(|| c.decl.refs.clone());
    }
    Ok(())
}

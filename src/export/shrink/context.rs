//! Context objects ([`super::Kind::Context`]): an object of a spec class whose constructor
//! only stores its parameters (the fuzz context), only read member by member, becomes those
//! members: a reference member bound to a variable is that variable, a member holding a number
//! is that number, an unread member goes, and a variable declared without initialiser only to
//! be passed to the constructor goes with it.

use std::collections::HashSet;
use std::ops::Range;

use anyhow::Result;

use crate::cpp_text::is_ident;
use crate::document::{Document, Function, Stmt};
use crate::export::simplify::{class_objects, plain_class, PlainClass};

use super::{is_number, operand_at, with_space_after, Chunk, Standalone};

/// The keys of [`super::Kind::Context`]: the names of `main`'s variables that can become their
/// members.
pub(super) fn keys(doc: &Document, text: &str, chunks: &[Chunk]) -> Vec<String> {
    context_objects(doc, text, chunks)
        .into_iter()
        .map(|c| c.var)
        .collect()
}

/// Replace the context object `key` names by its members; whether there was one.
pub(super) fn apply(out: &mut Standalone, key: &str) -> Result<bool> {
    let doc = Document::parse(out.test.clone().into_bytes())?;
    let objects = context_objects(&doc, &out.test, &out.chunks);
    let Some(c) = objects.into_iter().find(|c| c.var == key) else {
        return Ok(false);
    };
    out.test = c.rewrite(&out.test);
    Ok(true)
}

/// A context object in `main` ([`Kind::Context`]).
struct ContextObject {
    var: String,
    /// The declaration statement's span.
    decl: Range<usize>,
    /// What replaces the declaration (possibly nothing).
    replacement: String,
    /// Each member use and what replaces it.
    uses: Vec<(Range<usize>, String)>,
    /// Declarations of variables only passed to the constructor, to delete.
    dead: Vec<Range<usize>>,
}

impl ContextObject {
    fn rewrite(&self, text: &str) -> String {
        let mut edits: Vec<(Range<usize>, String)> = self
            .uses
            .iter()
            .map(|(r, v)| (r.clone(), operand_at(text, r, v)))
            .collect();
        let decl = match self.replacement.is_empty() {
            true => with_space_after(text, &self.decl),
            false => self.decl.clone(),
        };
        edits.push((decl, self.replacement.clone()));
        edits.extend(
            self.dead
                .iter()
                .map(|r| (with_space_after(text, r), String::new())),
        );
        edits.sort_by_key(|(r, _)| std::cmp::Reverse(r.start));
        let mut out = text.to_string();
        for (r, with) in edits {
            out.replace_range(r, &with);
        }
        out
    }
}

/// The context objects of `main` that can become their members.
fn context_objects(doc: &Document, text: &str, chunks: &[Chunk]) -> Vec<ContextObject> {
    let classes: Vec<PlainClass> = chunks
        .iter()
        .filter_map(|c| plain_class(&c.decl.namespaces, c.decl.name.as_deref()?, &c.text))
        .collect();
    let mut out = Vec::new();
    let Some(main) = doc.outline().functions.iter().find(|f| f.name == "main") else {
        return out;
    };
    for object in class_objects(main, text, &classes) {
        let (class, var) = (object.class, &object.var);
        let read: HashSet<usize> = object.uses.iter().map(|(_, m)| *m).collect();
        let mut declared = Vec::new();
        let mut with = vec![String::new(); class.members.len()];
        let mut dead = Vec::new();
        for (m, ((ty, name), value)) in class.members.iter().zip(&object.values).enumerate() {
            let reference = ty.ends_with('&');
            if !read.contains(&m) {
                if is_ident(value) {
                    dead.extend(only_passed(main, object.stmt, value, text));
                }
                continue;
            }
            if (reference && is_ident(value)) || is_number(value) {
                with[m] = value.clone();
            } else {
                let new = format!("{var}_{name}");
                declared.push(format!("{ty} {new} = {value};"));
                with[m] = new;
            }
        }
        out.push(ContextObject {
            decl: object.stmt.span.clone(),
            replacement: declared.join(" "),
            uses: object
                .uses
                .into_iter()
                .map(|(r, m)| (r, with[m].clone()))
                .collect(),
            var: object.var,
            dead,
        });
    }
    out
}

/// The declaration of `var` in `main` when it has no initialiser and its only use is in
/// `ctor` (the context object's declaration).
fn only_passed(main: &Function, ctor: &Stmt, var: &str, text: &str) -> Option<Range<usize>> {
    let decl = main
        .body
        .iter()
        .find(|s| s.decl.as_ref().is_some_and(|d| d.name == var))?;
    let d = decl.decl.as_ref()?;
    let uses = main
        .body
        .iter()
        .flat_map(|s| &s.idents)
        .filter(|(n, _)| n == var)
        .count();
    let in_ctor = ctor.idents.iter().filter(|(n, _)| n == var).count();
    (d.init.is_none() && !d.multiple && uses == in_ctor && text[decl.span.clone()].ends_with(';'))
        .then(|| decl.span.clone())
}

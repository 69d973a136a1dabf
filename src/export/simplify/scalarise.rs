//! A context object of `main` only read member by member (`fuzz::fuzz_context fctx(-48, 48);`
//! … `fctx.lo`) replaced by one variable per member: the spec class it is of ([`PlainClass`]:
//! public data members, a constructor that only stores its parameters) is then no longer
//! needed. The shrink's `context` kind finds such objects with the same helpers.

use std::collections::HashSet;
use std::ops::Range;

use anyhow::Result;

use crate::cpp_text::{last_ident, split_top};
use crate::document::declarations::Declaration;
use crate::document::Document;

/// A spec class of public data members and one constructor that only initialises each of them
/// from a parameter (the fuzz context): its qualified name, its members (type, name) and, per
/// constructor parameter, the member it initialises.
pub(in crate::export) struct PlainClass {
    pub(in crate::export) qualified: String,
    pub(in crate::export) members: Vec<(String, String)>,
    pub(in crate::export) params: Vec<usize>,
}

/// A constructor's parameter names and its `member(value)` initialisers.
type Ctor = (Vec<String>, Vec<(String, String)>);

/// `text` (the declaration of class `name` in `namespaces`) as a [`PlainClass`].
pub(in crate::export) fn plain_class(
    namespaces: &[String],
    name: &str,
    text: &str,
) -> Option<PlainClass> {
    let head = text.trim_start();
    let rest = head
        .strip_prefix("class")
        .or_else(|| head.strip_prefix("struct"))?;
    if !rest
        .trim_start()
        .strip_prefix(name)?
        .trim_start()
        .starts_with('{')
    {
        return None;
    }
    let body = &text[text.find('{')? + 1..text.rfind('}')?];
    let mut members: Vec<(String, String)> = Vec::new();
    // The constructor: its parameter names and its (member, value) initialisers.
    let mut ctor: Option<Ctor> = None;
    for item in split_top(body, b';') {
        let item = item.trim();
        let item = item.strip_prefix("public:").unwrap_or(item).trim();
        if item.is_empty() {
            continue;
        }
        if let Some(after) = item.strip_prefix(name) {
            let after = after.trim_start().strip_prefix('(')?;
            let close = after.find(')')?;
            let params: Vec<String> = split_top(&after[..close], b',')
                .iter()
                .map(|p| last_ident(p).to_string())
                .collect();
            let init = after[close + 1..].trim().strip_prefix(':')?;
            let (list, body) = init.rsplit_once('{')?;
            if body.trim() != "}" || ctor.is_some() {
                return None;
            }
            let inits = split_top(list, b',')
                .iter()
                .map(|i| {
                    let (m, v) = i.trim().strip_suffix(')')?.split_once('(')?;
                    Some((m.trim().to_string(), v.trim().to_string()))
                })
                .collect::<Option<Vec<_>>>()?;
            ctor = Some((params, inits));
        } else {
            let member = last_ident(item);
            let ty = item[..item.len() - member.len()].trim();
            if member.is_empty() || ty.is_empty() || item.contains(['(', '=', '{']) {
                return None;
            }
            members.push((ty.to_string(), member.to_string()));
        }
    }
    let (params, inits) = ctor?;
    if inits.len() != members.len() || params.len() != members.len() {
        return None;
    }
    let params = params
        .iter()
        .map(|p| {
            let (m, _) = inits.iter().find(|(_, v)| v == p)?;
            members.iter().position(|(_, n)| n == m)
        })
        .collect::<Option<Vec<usize>>>()?;
    let distinct: HashSet<&usize> = params.iter().collect();
    if distinct.len() != members.len() {
        return None;
    }
    let mut qualified = namespaces.to_vec();
    qualified.push(name.to_string());
    Some(PlainClass {
        qualified: qualified.join("::"),
        members,
        params,
    })
}

/// Replace, in `main`, a variable of a [`PlainClass`] that is only ever read member by member
/// (`fuzz::fuzz_context fctx(-48, 48);` … `fctx.lo`) by one variable per member (`long lo = -48;`
/// … `lo`): the class is then no longer needed.
pub(in crate::export) fn scalarise(
    decls: &[(Declaration, String)],
    mut test: String,
) -> Result<String> {
    let classes: Vec<PlainClass> = decls
        .iter()
        .filter_map(|(d, text)| plain_class(&d.namespaces, d.name.as_deref()?, text))
        .collect();
    if classes.is_empty() {
        return Ok(test);
    }
    let doc = Document::parse(test.clone().into_bytes())?;
    let taken: HashSet<String> = doc.identifiers().into_iter().map(|(n, _)| n).collect();
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    for f in doc.outline().functions.iter().filter(|f| f.name == "main") {
        for ClassObject {
            stmt,
            var,
            class,
            values,
            uses,
        } in class_objects(f, &test, &classes)
        {
            let names: Vec<String> = class
                .members
                .iter()
                .map(|(_, m)| {
                    if taken.contains(m) {
                        format!("{var}_{m}")
                    } else {
                        m.clone()
                    }
                })
                .collect();
            let indent: String = {
                let line = test[..stmt.span.start].rfind('\n').map_or(0, |p| p + 1);
                test[line..stmt.span.start].to_string()
            };
            let declared = class
                .members
                .iter()
                .zip(&names)
                .zip(&values)
                .map(|(((ty, _), name), value)| format!("{ty} {name} = {value};"))
                .collect::<Vec<_>>()
                .join(&format!("\n{indent}"));
            edits.push((stmt.span.clone(), declared));
            edits.extend(uses.into_iter().map(|(span, m)| (span, names[m].clone())));
        }
    }
    edits.sort_by_key(|(span, _)| std::cmp::Reverse(span.start));
    for (span, with) in edits {
        test.replace_range(span, &with);
    }
    Ok(test)
}

/// A variable of a [`PlainClass`] declared in `main` with its constructor's arguments, whose
/// every use reads a member.
pub(in crate::export) struct ClassObject<'f, 'c> {
    /// Its declaration statement.
    pub(in crate::export) stmt: &'f crate::document::Stmt,
    pub(in crate::export) var: String,
    pub(in crate::export) class: &'c PlainClass,
    /// Each member's value (the constructor argument it is set from), by member index.
    pub(in crate::export) values: Vec<String>,
    /// Every use: the span of `var.member` and the member's index ([`member_uses`]).
    pub(in crate::export) uses: Vec<(Range<usize>, usize)>,
}

/// The variables of `classes` that `main` (`f`) declares as `T v(args…);` with one argument per
/// constructor parameter and reads only member by member.
pub(in crate::export) fn class_objects<'f, 'c>(
    f: &'f crate::document::Function,
    test: &str,
    classes: &'c [PlainClass],
) -> Vec<ClassObject<'f, 'c>> {
    let mut out = Vec::new();
    for stmt in &f.body {
        let Some(decl) = stmt.decl.as_ref().filter(|d| d.direct_init && !d.multiple) else {
            continue;
        };
        let ty = decl.type_text.trim_start_matches("::");
        let Some(class) = classes.iter().find(|c| c.qualified == ty) else {
            continue;
        };
        let Some(init) = decl.init.as_ref() else {
            continue;
        };
        let args = test[init.clone()]
            .trim()
            .strip_prefix('(')
            .and_then(|a| a.strip_suffix(')'))
            .map(|a| split_top(a, b','));
        let Some(args) = args.filter(|a| a.len() == class.params.len()) else {
            continue;
        };
        let Some(uses) = member_uses(f, &decl.name, class, test) else {
            continue;
        };
        let mut values = vec![String::new(); class.members.len()];
        for (arg, &member) in args.iter().zip(&class.params) {
            values[member] = arg.trim().to_string();
        }
        out.push(ClassObject {
            stmt,
            var: decl.name.clone(),
            class,
            values,
            uses,
        });
    }
    out
}

/// Every use of the variable `name` in `f` as the span of `name.member` and the member's index;
/// `None` when a use reads no member of `class`.
pub(in crate::export) fn member_uses(
    f: &crate::document::Function,
    name: &str,
    class: &PlainClass,
    test: &str,
) -> Option<Vec<(Range<usize>, usize)>> {
    f.body
        .iter()
        .flat_map(|s| &s.idents)
        .filter(|(n, _)| n == name)
        .map(|(_, span)| {
            let after = test[span.end..].strip_prefix('.')?;
            let member = class.members.iter().position(|(_, m)| {
                after.strip_prefix(m.as_str()).is_some_and(|rest| {
                    !rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
                })
            })?;
            Some((
                span.start..span.end + 1 + class.members[member].1.len(),
                member,
            ))
        })
        .collect()
}

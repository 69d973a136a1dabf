//! The hierarchical search (issue 60) against a fake tree of folds.

use std::collections::HashSet;

use mfppr::opportunity::{Gathered, Opportunities, OpportunityKind};

use super::{join, lines_of, reduce_with, set, Rule};

/// Recursion folds as a tree: lines `rA`, `rA.B`, `rA.B.C` are recursion opportunities, and
/// deleting a line deletes the lines below it (a fold removes the calls inside what it folds).
/// With `parents`, a line's parent is the line above it ([`Gathered::parent`]).
#[derive(Debug)]
struct TreeReduction {
    parents: bool,
}

struct TreeGathered {
    lines: Vec<String>,
    parents: bool,
}

impl Opportunities for TreeReduction {
    fn gather<'a>(
        &'a self,
        text: &[u8],
        kind: OpportunityKind,
    ) -> anyhow::Result<Box<dyn Gathered + 'a>> {
        let lines = match kind {
            OpportunityKind::Recursion => lines_of(text),
            _ => Vec::new(),
        };
        Ok(Box::new(TreeGathered {
            lines,
            parents: self.parents,
        }))
    }
}

impl Gathered for TreeGathered {
    fn len(&self) -> usize {
        self.lines.len()
    }

    fn candidate(&self, window: &[usize]) -> Option<Vec<u8>> {
        let gone = |l: &str| {
            window.iter().any(|&i| {
                let w = &self.lines[i];
                l == w
                    || l.strip_prefix(w.as_str())
                        .is_some_and(|r| r.starts_with('.'))
            })
        };
        let kept: Vec<String> = self.lines.iter().filter(|l| !gone(l)).cloned().collect();
        Some(join(&kept))
    }

    fn describe(&self, i: usize) -> String {
        format!("fold `{}`", self.lines[i])
    }

    fn fingerprint(&self, i: usize) -> Option<u64> {
        let hash = blake3::hash(self.lines[i].as_bytes());
        Some(u64::from_le_bytes(hash.as_bytes()[..8].try_into().unwrap()))
    }

    fn parent(&self, i: usize) -> Option<usize> {
        let (up, _) = self.lines[i].rsplit_once('.')?;
        self.parents
            .then(|| self.lines.iter().position(|l| l == up))
            .flatten()
    }
}

/// Issue 60: a fold is offered only once the fold that would remove it was found needed alone.
/// The result is the flat search's, in fewer runs, and no child of a foldable line is judged.
#[test]
fn a_fold_inside_a_foldable_call_is_never_judged() {
    // As in a test's source: an instance's calls come before its caller's (definitions first),
    // the variants' steps last.
    let tree = [
        "r1.2.1", "r1.1", "r1.2", "r2.1.1", "r2.1.2", "r2.1", "r2.2", "r3.1", "r4.1", "r4.2", "r1",
        "r2", "r3", "r4",
    ];
    let text = join(&tree.map(str::to_string));
    let rule = Rule::Keeps(set(&["r2.1.1"]));
    let flat = reduce_with(
        &TreeReduction { parents: false },
        &text,
        rule.clone(),
        1,
        true,
        0,
    );
    let tree_search = |jobs| {
        reduce_with(
            &TreeReduction { parents: true },
            &text,
            rule.clone(),
            jobs,
            true,
            0,
        )
    };
    let hierarchical = tree_search(1);
    assert_eq!(
        hierarchical.result,
        join(&["r2.1.1", "r2.1", "r2"].map(str::to_string))
    );
    assert_eq!(hierarchical.result, flat.result);
    assert!(
        hierarchical.calls.len() < flat.calls.len(),
        "{} runs with parents, {} without",
        hierarchical.calls.len(),
        flat.calls.len()
    );
    for judged in &hierarchical.calls {
        let lines: HashSet<String> = lines_of(judged).into_iter().collect();
        for parent in ["r1", "r3", "r4", "r1.2"] {
            let children_gone = tree
                .iter()
                .any(|l| l.starts_with(&format!("{parent}.")) && !lines.contains(*l));
            assert!(
                !(lines.contains(parent) && children_gone),
                "a fold inside {parent} was judged:\n{}",
                String::from_utf8_lossy(judged)
            );
        }
    }
    assert_eq!(tree_search(3).result, hierarchical.result);
}

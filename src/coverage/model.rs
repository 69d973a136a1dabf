//! The one normalised coverage model every reader produces: file → line → count, plus function
//! names per line range, and function counts, branch counts and condition outcomes per line when
//! the format has them (the lcov tracefiles of [`super::diff::report`] write them as FN/FNDA/BRDA).

use std::collections::{BTreeMap, BTreeSet};

/// Line coverage of a set of source files. Keys are normalised paths (see [`super::read::load`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Per-file coverage, by normalised path.
    pub files: BTreeMap<String, FileCoverage>,
}

/// Coverage of one source file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileCoverage {
    /// Executable lines (1-based) and how often they ran. Lines without code are absent.
    pub lines: BTreeMap<u32, u64>,
    /// Functions with their line ranges, deduplicated by (name, range).
    pub functions: Vec<Function>,
    /// How often each function ran, by its name in `functions` (summed), when the format says.
    pub function_counts: BTreeMap<String, u64>,
    /// Mangled name of a function, by its name in `functions`, when the format has both.
    pub mangled_names: BTreeMap<String, String>,
    /// Branch counts per line, in gcov's order; entries of the same line (template
    /// instantiations, other runs) are summed position by position.
    pub branches: BTreeMap<u32, Vec<u64>>,
    /// Condition outcomes per line (GCC ≥ 14 `-fcondition-coverage`): one entry per boolean
    /// expression of the line, merged expression by expression.
    pub conditions: BTreeMap<u32, Vec<Conditions>>,
}

/// Condition coverage of one boolean expression: which of its terms were seen true and false.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Conditions {
    /// Number of terms (gcov's `count` is the number of outcomes, twice this).
    pub terms: u32,
    /// Terms (0-based) seen true at least once.
    pub seen_true: BTreeSet<u32>,
    /// Terms seen false at least once.
    pub seen_false: BTreeSet<u32>,
}

impl Conditions {
    /// Merge another run of the same expression: an outcome is covered when either run saw it.
    pub fn merge(&mut self, other: &Conditions) {
        self.terms = self.terms.max(other.terms);
        self.seen_true.extend(&other.seen_true);
        self.seen_false.extend(&other.seen_false);
    }

    /// Outcomes `self` saw that `before` did not, as `(term, value)`, by term, false first.
    pub fn gained_over(&self, before: &Conditions) -> Vec<(u32, bool)> {
        let mut out: Vec<(u32, bool)> = Vec::new();
        out.extend(
            self.seen_false
                .difference(&before.seen_false)
                .map(|&t| (t, false)),
        );
        out.extend(
            self.seen_true
                .difference(&before.seen_true)
                .map(|&t| (t, true)),
        );
        out.sort_unstable();
        out
    }
}

/// A function and the lines it spans.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Function {
    /// Demangled name when known, else the mangled one.
    pub name: String,
    /// First line (1-based, inclusive).
    pub start_line: u32,
    /// Last line (inclusive).
    pub end_line: u32,
}

impl Coverage {
    /// Add `count` executions of `line` of `file` (repeated lines are summed).
    pub fn add_line(&mut self, file: &str, line: u32, count: u64) {
        let entry = self
            .files
            .entry(file.to_string())
            .or_default()
            .lines
            .entry(line)
            .or_insert(0);
        *entry = entry.saturating_add(count);
    }

    /// Record that `function` lives in `file`.
    pub fn add_function(&mut self, file: &str, function: Function) {
        let fc = self.files.entry(file.to_string()).or_default();
        if !fc.functions.contains(&function) {
            fc.functions.push(function);
        }
    }

    /// Add `count` executions of the function named `name` (as in `functions`) of `file`.
    pub fn add_function_count(&mut self, file: &str, name: &str, count: u64) {
        let entry = self
            .files
            .entry(file.to_string())
            .or_default()
            .function_counts
            .entry(name.to_string())
            .or_insert(0);
        *entry = entry.saturating_add(count);
    }

    /// Add the branch counts of one entry of `line` of `file`, position by position.
    pub fn add_branches(&mut self, file: &str, line: u32, counts: &[u64]) {
        let v = self
            .files
            .entry(file.to_string())
            .or_default()
            .branches
            .entry(line)
            .or_default();
        if v.len() < counts.len() {
            v.resize(counts.len(), 0);
        }
        for (sum, &c) in v.iter_mut().zip(counts) {
            *sum = sum.saturating_add(c);
        }
    }

    /// Add the condition outcomes of one entry of `line` of `file`, expression by expression.
    pub fn add_conditions(&mut self, file: &str, line: u32, exprs: &[Conditions]) {
        let v = self
            .files
            .entry(file.to_string())
            .or_default()
            .conditions
            .entry(line)
            .or_default();
        for (i, e) in exprs.iter().enumerate() {
            match v.get_mut(i) {
                Some(have) => have.merge(e),
                None => v.push(e.clone()),
            }
        }
    }

    /// Sum `other` into `self`.
    pub fn merge(&mut self, other: Coverage) {
        for (path, fc) in other.files {
            for (line, count) in fc.lines {
                self.add_line(&path, line, count);
            }
            for f in fc.functions {
                self.add_function(&path, f);
            }
            for (name, count) in fc.function_counts {
                self.add_function_count(&path, &name, count);
            }
            for (line, counts) in fc.branches {
                self.add_branches(&path, line, &counts);
            }
            for (line, exprs) in fc.conditions {
                self.add_conditions(&path, line, &exprs);
            }
            if !fc.mangled_names.is_empty() {
                let mine = self.files.entry(path).or_default();
                for (name, mangled) in fc.mangled_names {
                    mine.mangled_names.entry(name).or_insert(mangled);
                }
            }
        }
    }

    /// Rename every file with `key` (files that map to the same key are merged; `None` drops it).
    pub fn rekey(self, mut key: impl FnMut(&str) -> Option<String>) -> Coverage {
        let mut out = Coverage::default();
        for (path, fc) in self.files {
            if let Some(k) = key(&path) {
                let mut one = Coverage::default();
                one.files.insert(k, fc);
                out.merge(one);
            }
        }
        out
    }

    /// Total number of executable lines recorded.
    pub fn line_count(&self) -> usize {
        self.files.values().map(|f| f.lines.len()).sum()
    }
}

impl FileCoverage {
    /// The function a line belongs to: the narrowest range containing it; among equal ranges
    /// (template instantiations) the lexicographically smallest name, so the choice is stable.
    pub fn function_at(&self, line: u32) -> Option<&Function> {
        self.functions
            .iter()
            .filter(|f| f.start_line <= line && line <= f.end_line)
            .min_by(|a, b| {
                (a.end_line - a.start_line)
                    .cmp(&(b.end_line - b.start_line))
                    .then(a.name.len().cmp(&b.name.len()))
                    .then(a.name.cmp(&b.name))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_lines_are_summed_and_rekey_merges() {
        let mut c = Coverage::default();
        c.add_line("/a/x.h", 3, 2);
        c.add_line("/a/x.h", 3, 5);
        c.add_line("/a/./x.h", 3, 1);
        assert_eq!(c.files["/a/x.h"].lines[&3], 7);
        let c = c.rekey(|p| Some(p.replace("/./", "/")));
        assert_eq!(c.files.len(), 1);
        assert_eq!(c.files["/a/x.h"].lines[&3], 8);
    }

    #[test]
    fn function_at_prefers_narrowest_then_shortest_name() {
        let fc = FileCoverage {
            functions: vec![
                Function {
                    name: "outer".into(),
                    start_line: 1,
                    end_line: 20,
                },
                Function {
                    name: "f<double>".into(),
                    start_line: 5,
                    end_line: 9,
                },
                Function {
                    name: "f<int>".into(),
                    start_line: 5,
                    end_line: 9,
                },
            ],
            ..FileCoverage::default()
        };
        assert_eq!(fc.function_at(6).unwrap().name, "f<int>");
        assert_eq!(fc.function_at(12).unwrap().name, "outer");
        assert!(fc.function_at(30).is_none());
    }
}

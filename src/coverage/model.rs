//! The one normalised coverage model every reader produces: file → line → count, plus function
//! names per line range when the format has them.

use std::collections::BTreeMap;

/// Line coverage of a set of source files. Keys are normalised paths (see [`super::load`]).
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

    /// Sum `other` into `self`.
    pub fn merge(&mut self, other: Coverage) {
        for (path, fc) in other.files {
            for (line, count) in fc.lines {
                self.add_line(&path, line, count);
            }
            for f in fc.functions {
                self.add_function(&path, f);
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

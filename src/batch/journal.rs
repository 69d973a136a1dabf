//! The campaign journal `OUTDIR/results.jsonl`: one [`Record`] per finished test, one JSON object
//! per line.
//!
//! A line is appended with a single `write` on a file opened with `O_APPEND`, then `fsync`ed, so a
//! crash (even SIGKILL) leaves every finished test on disk and at worst a torn last line, which
//! [`read`] ignores with a warning and [`Journal::open`] cuts off before appending again.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::cli::common::{CXXFLAGS_ENV, LDFLAGS_ENV};
use crate::reduce::ReduceOptions;

/// The journal's file name inside the batch output directory.
pub(crate) const JOURNAL: &str = "results.jsonl";

/// How one test of a campaign ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Outcome {
    /// Reduced; the result is in `output`.
    Reduced,
    /// The original is not interesting to the check (skipped).
    NotInteresting,
    /// The check script could not be run, or the oracle failed.
    OracleError,
    /// The input could not be read, or is not an MF++ test.
    InputError,
    /// An emitted task that left no result (`batch collect` only; never journaled).
    Missing,
}

impl Outcome {
    /// The name used in the journal and the table.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Outcome::Reduced => "reduced",
            Outcome::NotInteresting => "not_interesting",
            Outcome::OracleError => "oracle_error",
            Outcome::InputError => "input_error",
            Outcome::Missing => "missing",
        }
    }
}

/// What triage found about a reduced test: its MR families, blame's suspects and triggers, and
/// the knockouts (a part of [`Record`], flattened into its JSON).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct TriageFacts {
    /// Sorted MR families left in the result (reduced tests only).
    #[serde(default)]
    pub mrs: Vec<String>,
    /// Sorted suspect MR families: those blame finds (folding one of their calls to the family's
    /// base makes the failure go away), else where a checked variant differs from the reference.
    #[serde(default)]
    pub suspects: Vec<String>,
    /// Sorted library calls the blamed suspects reach.
    #[serde(default)]
    pub library_calls: Vec<String>,
    /// Where the suspects come from: `blame`, `blame: base operations` (the failure survives
    /// folding every MR), or `variants: <why blame did not decide>`.
    #[serde(default)]
    pub suspects_from: String,
    /// Check runs of blame (part of `triage_calls`).
    #[serde(default)]
    pub blame_calls: u64,
    /// Sorted MR families (`division`) whose calls the failure needs: computed by another MR of
    /// the family, the failure goes away (see [`crate::evidence::needs`]).
    #[serde(default)]
    pub needs: Vec<String>,
    /// Check runs of those knockouts (part of `triage_calls`).
    #[serde(default)]
    pub knockout_calls: u64,
    /// The MRs (`family::name`) of blame's innermost suspects: the relations whose transplant
    /// triggers the failure (see [`crate::evidence::Blame::triggers`]).
    #[serde(default)]
    pub triggers: Vec<String>,
    /// The MRs of the other foldable calls inside those suspects.
    #[serde(default)]
    pub within_triggers: Vec<String>,
    /// What each of those MRs brings into the computation it replaces: the families whose
    /// placeholders it calls and the library operations it calls itself.
    #[serde(default)]
    pub introduces: BTreeMap<String, Vec<String>>,
    /// The wrong value localised in the result (issue 44): the culprit call's library
    /// operations and the evidence, or why none could be named, in the journal's own versioned
    /// shape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<super::value_record::ValueRecord>,
}

/// The slip check of a reduced test and its repairs (a part of [`Record`], flattened).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct SlipFacts {
    /// Whether the original still fails with every call of the result's trigger MRs (and the MRs
    /// inside them) folded to its base: then its failure does not need what the result's does,
    /// and the reduction may have slipped to another bug. `None` when not asked (no trigger, or
    /// the original has no such call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slip_suspect: Option<bool>,
    /// Check runs of that question (part of `triage_calls`).
    #[serde(default)]
    pub slip_check_calls: u64,
    /// The slip check flagged the first result, so the result is the reduction of
    /// `<stem>.unslipped.cpp` (the original with that result's trigger MRs folded, and those of a
    /// repair not kept before, which still fails) instead; `oracle_calls` and `triage_calls`
    /// count every reduction and its triage.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub slip_repaired: bool,
    /// Check runs of the reductions of folded originals (slip repairs, kept or not): part of
    /// `oracle_calls`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub repair_calls: u64,
}

/// The signatures of a test (a part of [`Record`], flattened).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Signing {
    /// The MR-family signature (`--group-by mrs`): `failure | suspects` (reduced tests), or the
    /// outcome.
    pub signature: String,
    /// Sorted library operations the result's standalone export calls (reduced tests whose
    /// standalone can be built; see [`crate::export::library_operations`]).
    #[serde(default)]
    pub library_ops: Vec<String>,
    /// The library signature (`--group-by library`): `failure | library operations`,
    /// or the MR-family `signature` when the standalone cannot be built; empty in journals of
    /// older versions and for tests not reduced.
    #[serde(default)]
    pub library_signature: String,
    /// Where `library_signature` comes from: `library`, or `mrs` (no standalone export).
    #[serde(default)]
    pub signature_from: String,
    /// The value signature (`--group-by value`, the default): the program's own failure and the
    /// culprit's library operations, or `undecided` with the test's name (it stays alone).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub value_signature: String,
}

/// What a campaign's results are read again with (a part of [`Record`]): the spec directories and
/// headers and the compiler flags its tests were reduced with, so that `explain`, `retriage` and
/// the campaign page find the spec without the user typing the flags again. Empty in journals of
/// older versions.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct CampaignFlags {
    /// The spec search directories, absolute, in search order (`-I DIR`, then those after `--`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub include_dirs: Vec<PathBuf>,
    /// The extra spec headers (`--spec FILE`), absolute.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub specs: Vec<PathBuf>,
    /// The compiler flags after `--` as the check scripts got them: `MFPPR_CXXFLAGS` and
    /// `MFPPR_LDFLAGS`, each when set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<(String, String)>,
}

impl CampaignFlags {
    /// The flags the campaign's tests are reduced with under `ro`.
    pub(crate) fn of(ro: &ReduceOptions) -> CampaignFlags {
        let absolute = |p: &PathBuf| std::path::absolute(p).unwrap_or_else(|_| p.clone());
        let env = [CXXFLAGS_ENV, LDFLAGS_ENV]
            .iter()
            .filter_map(|name| ro.extra_env.iter().rev().find(|(k, _)| k == name))
            .cloned()
            .collect();
        CampaignFlags {
            include_dirs: ro.include_dirs.iter().map(absolute).collect(),
            specs: ro.specs.iter().map(absolute).collect(),
            env,
        }
    }

    /// Whether nothing was journaled (no flags, or an older journal).
    pub(crate) fn is_empty(&self) -> bool {
        self.include_dirs.is_empty() && self.specs.is_empty() && self.env.is_empty()
    }

    /// Point `ro` at these flags: its spec directories and headers, and the compiler flags in
    /// the check's environment.
    pub(crate) fn apply(&self, ro: &mut ReduceOptions) {
        ro.include_dirs = self.include_dirs.clone();
        ro.specs = self.specs.clone();
        ro.extra_env.extend(self.env.iter().cloned());
    }

    /// The flags of the latest record of `records` (in journal order) that has any.
    pub(crate) fn journaled(records: &[Record]) -> Option<&CampaignFlags> {
        records
            .iter()
            .rev()
            .map(|r| &r.flags)
            .find(|f| !f.is_empty())
    }
}

/// `ro` pointed at the flags the campaign in `dir` journaled last ([`CampaignFlags`]); unchanged
/// when it journaled none (a journal of an older mfppr).
pub(crate) fn with_journaled_flags(
    dir: &Path,
    mut ro: ReduceOptions,
) -> anyhow::Result<ReduceOptions> {
    if let Some(flags) = CampaignFlags::journaled(&read(dir)?) {
        flags.apply(&mut ro);
    }
    Ok(ro)
}

/// One finished test: a journal line, and the per-test `result.json` of scale-out runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Record {
    /// The input test (absolute path).
    pub input: PathBuf,
    /// The name of its directory under the batch output directory.
    pub stem: String,
    /// blake3 of the input's bytes (hex); `--resume` skips a test finished with the same hash.
    pub hash: String,
    /// How it ended.
    pub outcome: Outcome,
    /// Size of the input.
    pub bytes_before: u64,
    /// Size of the result (the input's size when not reduced).
    pub bytes_after: u64,
    /// Check runs of the reduction (setup checks and rechecks included; triage's are in
    /// `triage_calls`).
    pub oracle_calls: u64,
    /// Wall time of the test.
    pub wall_secs: f64,
    /// The failing check or signal of the result (reduced tests only).
    pub failure: Option<String>,
    /// What triage found: MR families, blame's suspects and triggers, the knockouts.
    #[serde(flatten)]
    pub triage: TriageFacts,
    /// The slip check and slip repairs.
    #[serde(flatten)]
    pub slip: SlipFacts,
    /// Check runs of triage, not part of `oracle_calls`: the run that reads the result's failure,
    /// blame's, the knockouts', the value localisation's and the slip check's.
    #[serde(default)]
    pub triage_calls: u64,
    /// The signatures the campaign groups by.
    #[serde(flatten)]
    pub sign: Signing,
    /// The reduced test (reduced tests only).
    pub output: Option<PathBuf>,
    /// The stats JSON (reduced tests only).
    pub stats: Option<PathBuf>,
    /// Why the test was not reduced.
    pub message: Option<String>,
    /// The flags the campaign ran with.
    #[serde(default, skip_serializing_if = "CampaignFlags::is_empty")]
    pub flags: CampaignFlags,
}

/// Serde's test for a count left out of the journal when it is zero.
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Record {
    /// Add `why` to the record's message (after what it already says, `; `-separated).
    pub(crate) fn note(&mut self, why: String) {
        self.message = Some(match self.message.take() {
            Some(m) => format!("{m}; {why}"),
            None => why,
        });
    }

    /// A record of `input` (`bytes` long) with `outcome` and nothing else known yet.
    pub(crate) fn new(input: PathBuf, stem: String, bytes: u64, outcome: Outcome) -> Record {
        Record {
            input,
            stem,
            hash: String::new(),
            outcome,
            bytes_before: bytes,
            bytes_after: bytes,
            oracle_calls: 0,
            wall_secs: 0.0,
            failure: None,
            triage: TriageFacts::default(),
            slip: SlipFacts::default(),
            triage_calls: 0,
            sign: Signing::default(),
            output: None,
            stats: None,
            message: None,
            flags: CampaignFlags::default(),
        }
    }
}

/// The journal, open for appending.
#[derive(Debug)]
pub(crate) struct Journal {
    file: File,
    path: PathBuf,
}

impl Journal {
    /// Open (or create) the journal in `dir`, cutting off a torn last line left by a crash.
    pub(crate) fn open(dir: &Path) -> anyhow::Result<Journal> {
        let path = dir.join(JOURNAL);
        if let Some(bytes) =
            crate::input::read_if_any(&path, crate::input::MAX_JOURNAL_BYTES, "a journal")?
        {
            let keep = complete_prefix(&bytes);
            if keep < bytes.len() {
                crate::messages::warn(format!(
                    "{}: the last line is torn (an interrupted write); removing it",
                    path.display()
                ));
                let file = OpenOptions::new()
                    .write(true)
                    .custom_flags(nix::libc::O_NOFOLLOW)
                    .open(&path)
                    .with_context(|| format!("cannot open {}", path.display()))?;
                file.set_len(keep as u64)
                    .and_then(|()| file.sync_data())
                    .with_context(|| format!("cannot repair {}", path.display()))?;
            }
        }
        // Never through a symlink (the writer policy, [`crate::atomic`]): `O_NOFOLLOW` refuses one.
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .custom_flags(nix::libc::O_NOFOLLOW)
            .open(&path)
            .with_context(|| {
                format!(
                    "cannot open the journal {}; check the output directory",
                    path.display()
                )
            })?;
        Ok(Journal { file, path })
    }

    /// Append `record` as one line with a single `write`, then `fsync`.
    pub(crate) fn append(&mut self, record: &Record) -> anyhow::Result<()> {
        let mut line = serde_json::to_vec(record).context("cannot serialise a journal record")?;
        line.push(b'\n');
        let written = self
            .file
            .write(&line)
            .with_context(|| format!("cannot append to {}", self.path.display()))?;
        if written != line.len() {
            anyhow::bail!(
                "short write to {} ({written} of {} bytes); check free space",
                self.path.display(),
                line.len()
            );
        }
        self.file
            .sync_data()
            .with_context(|| format!("cannot sync {}", self.path.display()))
    }
}

/// The length of the part of `bytes` made of complete lines.
fn complete_prefix(bytes: &[u8]) -> usize {
    bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1)
}

/// The records of the journal in `dir` (none if it does not exist). A line that does not parse
/// is skipped with a warning (a torn last line after a crash).
pub(crate) fn read(dir: &Path) -> anyhow::Result<Vec<Record>> {
    let path = dir.join(JOURNAL);
    let bytes = crate::input::read_if_any(&path, crate::input::MAX_JOURNAL_BYTES, "a journal")?;
    Ok(bytes.map_or_else(Vec::new, |b| parse(&path, &b)))
}

fn parse(path: &Path, bytes: &[u8]) -> Vec<Record> {
    let mut records = Vec::new();
    for (n, line) in bytes.split(|&b| b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice(line) {
            Ok(r) => records.push(r),
            Err(e) => crate::messages::warn(format!(
                "{}:{}: ignoring a line that is not a record ({e}); a torn write?",
                path.display(),
                n + 1
            )),
        }
    }
    records
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(stem: &str) -> Record {
        Record {
            input: PathBuf::from(format!("/t/{stem}.cpp")),
            stem: stem.to_string(),
            hash: format!("h-{stem}"),
            outcome: Outcome::Reduced,
            bytes_before: 100,
            bytes_after: 10,
            oracle_calls: 7,
            wall_secs: 1.5,
            failure: Some("check_equal".into()),
            triage: TriageFacts {
                mrs: vec!["relations::shift".into()],
                suspects: vec!["relations::shift".into()],
                library_calls: vec!["iset::shift".into()],
                suspects_from: "blame".into(),
                blame_calls: 1,
                ..TriageFacts::default()
            },
            slip: SlipFacts::default(),
            triage_calls: 2,
            sign: Signing {
                signature: "check_equal | relations::shift".into(),
                library_ops: vec!["iset::shift".into(), "iset::unite".into()],
                library_signature: "check_equal | iset::shift iset::unite".into(),
                signature_from: "library".into(),
                value_signature: String::new(),
            },
            output: Some(PathBuf::from(format!("/o/{stem}/{stem}.reduced.cpp"))),
            stats: None,
            message: None,
            flags: CampaignFlags::default(),
        }
    }

    #[test]
    fn appended_records_read_back_and_a_torn_line_is_cut() {
        let dir = tempfile::tempdir().unwrap();
        let mut j = Journal::open(dir.path()).unwrap();
        j.append(&record("a")).unwrap();
        j.append(&record("b")).unwrap();
        drop(j);
        let path = dir.path().join(JOURNAL);
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(br#"{"input":"/t/c.cpp","st"#).unwrap();
        drop(f);
        let read_back = read(dir.path()).unwrap();
        assert_eq!(read_back, vec![record("a"), record("b")]);
        let mut j = Journal::open(dir.path()).unwrap();
        j.append(&record("c")).unwrap();
        let stems: Vec<_> = read(dir.path())
            .unwrap()
            .into_iter()
            .map(|r| r.stem)
            .collect();
        assert_eq!(stems, ["a", "b", "c"]);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 3);
    }

    #[test]
    fn the_campaigns_flags_are_journaled_and_an_older_journal_still_reads() {
        let mut ro = ReduceOptions::new("t.cpp", "c.py");
        ro.include_dirs = vec![PathBuf::from("spec"), PathBuf::from("/abs")];
        ro.extra_env = vec![
            ("MFPPR_CXXFLAGS".into(), "-I /abs -DX".into()),
            ("CXXFLAGS".into(), "-w".into()),
        ];
        let flags = CampaignFlags::of(&ro);
        assert!(flags.include_dirs.iter().all(|d| d.is_absolute()));
        assert_eq!(flags.env, [("MFPPR_CXXFLAGS".into(), "-I /abs -DX".into())]);
        let mut r = record("a");
        r.flags = flags.clone();
        let line = serde_json::to_string(&r).unwrap();
        let back: Record = serde_json::from_str(&line).unwrap();
        assert_eq!(back.flags, flags);
        assert_eq!(CampaignFlags::journaled(&[back, record("b")]), Some(&flags));
        // A line of an older mfppr has no flags: it reads, with none.
        let older = serde_json::to_string(&record("c")).unwrap();
        assert!(!older.contains("\"flags\""), "{older}");
        let read: Record = serde_json::from_str(&older).unwrap();
        assert!(read.flags.is_empty());
        let mut again = ReduceOptions::new("", "");
        flags.apply(&mut again);
        assert_eq!(again.include_dirs, flags.include_dirs);
        assert_eq!(again.extra_env, flags.env);
    }

    #[test]
    fn complete_prefix_stops_after_the_last_newline() {
        assert_eq!(complete_prefix(b""), 0);
        assert_eq!(complete_prefix(b"ab"), 0);
        assert_eq!(complete_prefix(b"a\nb"), 2);
        assert_eq!(complete_prefix(b"a\nb\n"), 4);
    }
}

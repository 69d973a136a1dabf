//! What a campaign's triage groups by (`--group-by`): below triage and its `explain`.

/// What the triage groups by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum GroupBy {
    /// The program's own failure and the library operation whose value is wrong (localised in
    /// the result: see `crate::evidence::values`).
    #[default]
    Value,
    /// The failure and what triggers it (blame's innermost suspects), else the MR families whose
    /// calls it needs (knockouts), else the library operations the standalone export calls.
    Library,
    /// The failure and the suspect MR families (blame).
    Mrs,
}

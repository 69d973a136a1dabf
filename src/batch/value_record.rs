//! The wrong value as a campaign's journal keeps it (issue 58): a type of the journal's own,
//! versioned, so that the value localiser's structs ([`crate::evidence::values`]) can change
//! without changing `results.jsonl`. Triage, `explain` and the page read this, never the
//! localiser's types.
//!
//! Version 1 is the first versioned shape. Records written before it (mfppr 0.1 up to issue 58)
//! have no `version` and the same fields: they read as version 0 and are used as they are, so
//! `--resume`, `retriage` and `explain` read old campaigns.

use serde::{Deserialize, Serialize};

use crate::evidence::values::{Evidence, Localised};

/// The version [`ValueRecord`]s are written with.
pub(crate) const VALUE_RECORD_VERSION: u32 = 1;

/// A result's wrong value: the culprit call's library operations and the evidence, or why none
/// could be named.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub(crate) struct ValueRecord {
    /// The shape's version ([`VALUE_RECORD_VERSION`]; 0: written before versions).
    #[serde(default)]
    pub version: u32,
    /// The program's own failure (the failing check, the uncaught exception, the signal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// The library operations of the culprit call, sorted; empty when undecided.
    #[serde(default)]
    pub culprit: Vec<String>,
    /// The culprit call, how it is wrong, and the values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<ValueEvidence>,
    /// Why no culprit could be named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undecided: Option<String>,
    /// The culprit's operations that no probed call computes alone another way.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unchecked: Vec<String>,
    /// Calls probed.
    #[serde(default)]
    pub probes: u64,
    /// Check runs made: the instrumented run, then the value knockouts.
    #[serde(default)]
    pub runs: u64,
    /// Seconds localising took.
    #[serde(default)]
    pub secs: f64,
    /// The probe log was cut at its size limit.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub log_cut: bool,
}

/// The culprit call and its values.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub(crate) struct ValueEvidence {
    /// The function the call is in.
    pub place: String,
    /// The call as written.
    pub call: String,
    /// Its MR family.
    pub family: String,
    /// How it is wrong.
    pub how: String,
    /// Its operands' values, as printed, in argument order.
    #[serde(default)]
    pub operands: Vec<String>,
    /// The values: the call's own (`call`), then each other way's (`family::mr`), as printed.
    pub values: Vec<(String, String)>,
    /// The other ways its value differs from.
    pub differs_from: Vec<String>,
    /// A difference of its values was told by their printed forms (no check of the test compares
    /// values of their type).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub by_printed_form: bool,
    /// What decided the culprit when the values and the value knockouts were both read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
}

impl From<Localised> for ValueRecord {
    fn from(found: Localised) -> ValueRecord {
        ValueRecord {
            version: VALUE_RECORD_VERSION,
            failure: found.failure,
            culprit: found.culprit,
            evidence: found.evidence.map(ValueEvidence::from),
            undecided: found.undecided,
            unchecked: found.unchecked,
            probes: found.probes,
            runs: found.runs,
            secs: found.secs,
            log_cut: found.log_cut,
        }
    }
}

impl From<Evidence> for ValueEvidence {
    fn from(e: Evidence) -> ValueEvidence {
        ValueEvidence {
            place: e.place,
            call: e.call,
            family: e.family,
            how: e.how,
            operands: e.operands,
            values: e.values,
            differs_from: e.differs_from,
            by_printed_form: e.by_printed_form,
            decided_by: e.decided_by,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_of_the_previous_release_reads_as_version_0_with_its_fields() {
        let old = r#"{"failure":"check_equal","culprit":["iset::unite"],"evidence":{"place":"main","call":"unite(a, b)","family":"relations::unite","how":"differs","values":[["call","{1}"],["unite::unite_comm","{1, 2}"]],"differs_from":["unite::unite_comm"]},"probes":4,"runs":1,"secs":0.5}"#;
        let read: ValueRecord = serde_json::from_str(old).unwrap();
        assert_eq!(read.version, 0);
        assert_eq!(read.culprit, ["iset::unite"]);
        let evidence = read.evidence.as_ref().unwrap();
        assert_eq!(evidence.values[1].1, "{1, 2}");
        assert!(evidence.operands.is_empty());
        assert_eq!((read.probes, read.runs), (4, 1));
    }

    #[test]
    fn what_the_localiser_found_is_written_as_the_current_version() {
        let found = Localised {
            culprit: vec!["z3::mod".to_string()],
            runs: 2,
            ..Localised::default()
        };
        let record = ValueRecord::from(found);
        assert_eq!(record.version, VALUE_RECORD_VERSION);
        let json = serde_json::to_value(&record).unwrap();
        assert_eq!(json["version"], 1);
        assert_eq!(json["culprit"][0], "z3::mod");
        let back: ValueRecord = serde_json::from_value(json).unwrap();
        assert_eq!(back, record);
    }
}

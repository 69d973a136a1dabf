//! The engine with the real [`ScriptOracle`] at `jobs` 4: speculative runs of a real script are
//! killed (whole process group) when an earlier candidate wins, and the result matches `jobs` 1.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use mfppr::engine::{Engine, EngineOptions};
use mfppr::opportunity::{Gathered, Opportunities, OpportunityKind};
use mfppr::oracle::ScriptOracle;

/// Deletes lines not starting with `#`, as fuzz opportunities only.
#[derive(Debug)]
struct Lines;

struct LinesGathered {
    lines: Vec<String>,
    opportunities: Vec<usize>,
}

impl Opportunities for Lines {
    fn gather<'a>(
        &'a self,
        text: &[u8],
        kind: OpportunityKind,
    ) -> anyhow::Result<Box<dyn Gathered + 'a>> {
        let lines: Vec<String> = String::from_utf8_lossy(text)
            .lines()
            .map(str::to_string)
            .collect();
        let opportunities = if kind == OpportunityKind::Fuzz {
            (0..lines.len())
                .filter(|&i| !lines[i].starts_with('#'))
                .collect()
        } else {
            Vec::new()
        };
        Ok(Box::new(LinesGathered {
            lines,
            opportunities,
        }))
    }
}

impl Gathered for LinesGathered {
    fn len(&self) -> usize {
        self.opportunities.len()
    }
    fn candidate(&self, window: &[usize]) -> Option<Vec<u8>> {
        let drop: Vec<usize> = window.iter().map(|&i| self.opportunities[i]).collect();
        let mut out = String::new();
        for (i, l) in self.lines.iter().enumerate() {
            if !drop.contains(&i) {
                out.push_str(l);
                out.push('\n');
            }
        }
        Some(out.into_bytes())
    }
    fn describe(&self, i: usize) -> String {
        format!("delete line {}", self.opportunities[i])
    }
}

static NO_INTERRUPT: AtomicBool = AtomicBool::new(false);

fn oracle(dir: &Path, pids: &Path) -> ScriptOracle {
    // Interesting: keeps KEEP. Candidates that lost KEEP but still have `b` hang (they only occur
    // in the first batch, after the winner, so they must be killed).
    let script = dir.join("check.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ngrep -q '^KEEP$' \"$1\" && exit 0\n\
             if grep -q '^b$' \"$1\"; then echo $$ >> '{}'; exec sleep 60; fi\nexit 1\n",
            pids.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let input = dir.join("t.cpp");
    let mut o = ScriptOracle::new(&script, &input, vec![]).unwrap();
    o.set_interrupt_flag(&NO_INTERRUPT);
    o.with_timeout(Some(Duration::from_secs(120)))
}

fn run(jobs: usize, dir: &Path, pids: &Path) -> Vec<u8> {
    let oracle = oracle(dir, pids);
    let flag = AtomicBool::new(false);
    let mut engine = Engine::new(
        &Lines,
        &oracle,
        EngineOptions {
            jobs,
            cache: true,
            quiet: true,
            ..EngineOptions::default()
        },
        &flag,
    )
    .unwrap();
    engine
        .run(b"#head\na\nb\nKEEP\nc\n".to_vec(), &mut |_t: &[u8]| Ok(()))
        .unwrap()
}

#[test]
fn speculative_script_runs_are_killed_and_the_result_matches_one_job() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let start = Instant::now();
    let parallel = run(4, dir.path(), &pids);
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "waited for a run that should have been killed: {:?}",
        start.elapsed()
    );
    assert_eq!(parallel, b"#head\nKEEP\n");
    // Every hanging script that started has been killed.
    for pid in std::fs::read_to_string(&pids)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse::<i32>().ok())
    {
        let alive = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok();
        assert!(!alive, "script {pid} still running");
    }
    // With one job the same candidates are judged in order; [2,4) is never reached before the
    // winner [0,2), so nothing hangs.
    let serial = run(1, dir.path(), &dir.path().join("pids1"));
    assert_eq!(serial, parallel);
}

//! Command-line pieces shared by subcommands: the reduction flags of `reduce` and `batch`
//! ([`ReductionArgs`]), the compiler flags after `--` (taken as MF++'s generator takes them) and
//! reading the test from standard input (`-`).

use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;

use crate::engine::Inputs;
use crate::error::{coded, ExitKind};
use crate::oracle::shell_quote;
use crate::reduce::ReduceOptions;

/// Which exit statuses of the check script count as interesting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum InterestingExit {
    /// Exit status 0 (C-Vise / C-Reduce convention).
    Zero,
    /// The same exit status as the original input, which must fail (MF++R convention).
    Auto,
}

/// When the fuzzed inputs are reduced (`--inputs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum InputsArg {
    /// In every round, after the test's structure (the default of `reduce`).
    Anytime,
    /// Once the structure reached its fixpoint on the original inputs, and the structure not
    /// again after (the default of `batch`: keeps each test on its own bug when a library has
    /// several).
    Last,
}

impl InputsArg {
    /// The engine's setting.
    pub fn inputs(self) -> Inputs {
        match self {
            InputsArg::Anytime => Inputs::Anytime,
            InputsArg::Last => Inputs::Last,
        }
    }
}

/// The check's timeout and exit rule: `report`'s, and part of [`ReductionArgs`] (`reduce`,
/// `batch`).
#[derive(Debug, clap::Args)]
pub struct CheckRuleArgs {
    /// Seconds before a check run is killed [default: max(10, 5 × the original's run), ≤ 300].
    #[arg(long, value_name = "SECS", value_parser = parse_secs, help_heading = "Interestingness")]
    pub timeout: Option<Duration>,

    /// What counts as interesting: exit 0, or the original's (non-zero) exit status.
    #[arg(
        long,
        value_name = "MODE",
        value_enum,
        default_value_t = InterestingExit::Zero,
        help_heading = "Interestingness"
    )]
    pub interesting_exit: InterestingExit,
}

impl CheckRuleArgs {
    /// The rule: the exit rule and the timeout come from the test's first run unless given.
    pub(crate) fn rule(&self) -> crate::judge::CheckRule {
        crate::judge::CheckRule {
            timeout: self.timeout,
            expected: None,
            same_status: self.interesting_exit == InterestingExit::Auto,
        }
    }
}

/// How a test is reduced: the flags `mfppr reduce` and `mfppr batch` share.
#[derive(Debug, clap::Args)]
pub struct ReductionArgs {
    #[command(flatten)]
    pub rule: CheckRuleArgs,

    /// Do not remember verdicts of candidates already judged (for flaky checks).
    #[arg(long, help_heading = "Interestingness")]
    pub no_cache: bool,

    /// Runs of the final result after the search, to catch a flaky check (0: none).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        value_parser = clap::value_parser!(u32).range(0..=MAX_RECHECK as i64),
        help_heading = "Interestingness"
    )]
    pub recheck: u32,

    /// Extra directory to search for the spec headers the test includes (repeatable).
    #[arg(short = 'I', value_name = "DIR", help_heading = "Reduction")]
    pub include: Vec<PathBuf>,

    /// Extra spec header to read MRs from (repeatable).
    #[arg(long, value_name = "FILE", help_heading = "Reduction")]
    pub spec: Vec<PathBuf>,

    /// Keep every remaining variant's checks.
    #[arg(long, help_heading = "Reduction")]
    pub keep_checks: bool,

    /// Allow removing the last non-reference variant (the result may have no metamorphic check).
    #[arg(long, help_heading = "Reduction")]
    pub drop_oracle: bool,

    /// Skip the tail passes (inputs, identity MRs, wrappers, text, tidy) run after the four kinds.
    #[arg(long, help_heading = "Reduction")]
    pub no_tail: bool,

    /// Skip the check cut: before the search, one run of the original with every check run to
    /// its end (each in a child process) says which checks fail, and the candidate that keeps
    /// only the reference and the variants whose checks fail as the original does is judged
    /// first (issue 60; docs/reduce.md).
    #[arg(long, help_heading = "Reduction")]
    pub no_check_cut: bool,

    /// Before the search, one instrumented run of the original, read for the check that failed
    /// and the calls the wrong value is computed in, and the candidate that keeps only those,
    /// judged first (off by default: it cost bytes on bench-real, docs/results/real.md).
    #[arg(long, help_heading = "Reduction")]
    pub guided_cut: bool,

    /// When the fuzzed inputs are reduced [default: anytime for reduce, last for batch].
    #[arg(
        long = "inputs",
        value_enum,
        value_name = "WHEN",
        help_heading = "Reduction"
    )]
    pub inputs_when: Option<InputsArg>,
}

impl ReductionArgs {
    /// Set these flags' fields of `opts` (the include directories as given, before any `--`).
    pub fn apply(&self, opts: &mut ReduceOptions) {
        opts.include_dirs = self.include.clone();
        opts.specs = self.spec.clone();
        opts.keep_checks = self.keep_checks;
        opts.drop_oracle = self.drop_oracle;
        opts.tail = !self.no_tail;
        opts.check_cut = !self.no_check_cut;
        opts.guided_cut = self.guided_cut;
        if let Some(inputs) = self.inputs_when {
            opts.inputs = inputs.inputs();
        }
        opts.timeout = self.rule.timeout;
        opts.interesting_exit_auto = self.rule.interesting_exit == InterestingExit::Auto;
        opts.cache = !self.no_cache;
        opts.recheck = self.recheck;
    }
}

/// The most `--recheck` runs: more only repeats what 100 runs could not catch.
pub const MAX_RECHECK: u32 = 100;

/// The longest timeout any flag accepts: one day.
pub const MAX_TIMEOUT_SECS: u64 = 86_400;

/// Parse a positive number of seconds, at most [`MAX_TIMEOUT_SECS`].
pub fn parse_secs(s: &str) -> Result<Duration, String> {
    let secs: f64 = s
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if !secs.is_finite() || secs <= 0.0 {
        return Err(format!("the timeout must be more than 0 seconds, not {s}"));
    }
    if secs > MAX_TIMEOUT_SECS as f64 {
        return Err(format!(
            "the timeout must be at most {MAX_TIMEOUT_SECS} seconds (one day), not {s}"
        ));
    }
    Duration::try_from_secs_f64(secs).map_err(|e| format!("`{s}`: {e}"))
}

/// The environment variable that carries the compiler flags to the check scripts.
pub const CXXFLAGS_ENV: &str = "MFPPR_CXXFLAGS";
/// The environment variable that carries the link flags after `--` (`-l`, `-L`, `-Wl,`) to the
/// check scripts and the report's build, which put them after the source, where a linker reads
/// them.
pub const LDFLAGS_ENV: &str = "MFPPR_LDFLAGS";
/// Link flags: they go after the source ([`LDFLAGS_ENV`]); `-l` and `-L` may take their value as
/// the next word.
const LINK_FLAGS: [&str; 3] = ["-l", "-L", "-Wl,"];

/// Flags that take a directory searched for headers, in the order the compiler searches them for
/// a quoted include (after the including file's directory).
const DIR_FLAGS: [&str; 3] = ["-iquote", "-I", "-isystem"];
/// Flags that take a macro.
const MACRO_FLAGS: [&str; 2] = ["-D", "-U"];

/// The compiler flags given after `--`, as MF++'s generator takes them
/// (`-- -std=c++17 -I$SPEC -I$SPEC/QF_NIA`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompilerFlags {
    /// Directories searched for quoted includes, in the compiler's order (`-iquote`, `-I`,
    /// `-isystem`), made absolute.
    pub include_dirs: Vec<PathBuf>,
    /// `-D NAME[=VALUE]` (as `NAME[=VALUE]`) and `-U NAME` (as `!NAME`), in order. The catalogue
    /// reads both branches of `#ifdef EXECUTE` anyway; they are recorded for the report.
    pub macros: Vec<String>,
    /// Every flag but the link flags, include directories made absolute (the scripts compile
    /// in a temp directory).
    pub flags: Vec<String>,
    /// The link flags (`-lz3`, `-L DIR`, `-Wl,…`), in order, `-L` directories made absolute.
    pub link: Vec<String>,
}

impl CompilerFlags {
    /// Read the flags after `--`. `-I DIR` and `-IDIR` (likewise `-isystem`, `-iquote`, `-D`,
    /// `-U`) are both accepted; a flag missing its argument is a usage error.
    pub fn parse(args: &[String]) -> anyhow::Result<CompilerFlags> {
        let mut dirs: [Vec<PathBuf>; 3] = Default::default();
        let mut out = CompilerFlags::default();
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            if let Some(flag) = LINK_FLAGS.iter().find(|f| arg.starts_with(*f)) {
                let value = match &arg[flag.len()..] {
                    "" if *flag != "-Wl," => args.next().cloned().ok_or_else(|| {
                        coded(
                            ExitKind::Usage,
                            format!("link flag {flag} after -- needs an argument"),
                        )
                    })?,
                    joined => joined.to_string(),
                };
                let value = match *flag {
                    "-L" => absolute(Path::new(&value))?.to_string_lossy().into_owned(),
                    _ => value,
                };
                out.link.push(format!("{flag}{value}"));
                continue;
            }
            let dir_flag = DIR_FLAGS.iter().position(|f| arg.starts_with(f));
            let macro_flag = MACRO_FLAGS.iter().find(|f| arg.starts_with(*f));
            let flag = match (dir_flag, macro_flag) {
                (Some(i), _) => DIR_FLAGS[i],
                (None, Some(f)) => f,
                (None, None) => {
                    out.flags.push(arg.clone());
                    continue;
                }
            };
            let value = match &arg[flag.len()..] {
                "" => args.next().cloned().ok_or_else(|| {
                    coded(
                        ExitKind::Usage,
                        format!("compiler flag {flag} after -- needs an argument"),
                    )
                })?,
                joined => joined.to_string(),
            };
            match dir_flag {
                Some(i) => {
                    let dir = absolute(Path::new(&value))?;
                    out.flags.push(flag.to_string());
                    out.flags.push(dir.to_string_lossy().into_owned());
                    dirs[i].push(dir);
                }
                None => {
                    out.macros.push(if flag == "-U" {
                        format!("!{value}")
                    } else {
                        value.clone()
                    });
                    out.flags.push(format!("{flag}{value}"));
                }
            }
        }
        out.include_dirs = dirs.into_iter().flatten().collect();
        Ok(out)
    }

    /// The flags as one shell word list (what `MFPPR_CXXFLAGS` holds), or `None` when there are
    /// none.
    pub fn env_value(&self) -> Option<String> {
        words(&self.flags)
    }

    /// The check script's environment for these flags: `MFPPR_CXXFLAGS` and `MFPPR_LDFLAGS`,
    /// each when there are such flags.
    pub fn env(&self) -> Vec<(String, String)> {
        let cxx = self.env_value().map(|v| (CXXFLAGS_ENV.to_string(), v));
        let ld = words(&self.link).map(|v| (LDFLAGS_ENV.to_string(), v));
        cxx.into_iter().chain(ld).collect()
    }

    /// Point `opts` at these flags: the spec search directories (after the `-I DIR`s given as
    /// `dash_i`) and, for the check script, [`CompilerFlags::env`] (added to its environment).
    pub fn apply(&self, dash_i: &[PathBuf], opts: &mut ReduceOptions) {
        opts.include_dirs = self.search_dirs(dash_i);
        opts.extra_env.extend(self.env());
    }

    /// The include directories of `-I DIR` options followed by those after `--`, without the
    /// ones after `--` that do not exist (a compiler ignores them; each is warned about).
    pub fn search_dirs(&self, dash_i: &[PathBuf]) -> Vec<PathBuf> {
        let mut out = dash_i.to_vec();
        for dir in &self.include_dirs {
            if dir.is_dir() {
                if !out.contains(dir) {
                    out.push(dir.clone());
                }
            } else {
                crate::messages::warn(format!(
                    "include directory {} (after --) does not exist; ignored",
                    dir.display()
                ));
            }
        }
        out
    }
}

/// `flags` as one shell word list, or `None` when there are none.
fn words(flags: &[String]) -> Option<String> {
    (!flags.is_empty()).then(|| {
        flags
            .iter()
            .map(|f| shell_quote(f))
            .collect::<Vec<_>>()
            .join(" ")
    })
}

/// `path` made absolute against the current directory.
fn absolute(path: &Path) -> anyhow::Result<PathBuf> {
    std::path::absolute(path).with_context(|| format!("cannot resolve {}", path.display()))
}

/// Whether the FILE argument means standard input.
pub fn is_stdin(file: &Path) -> bool {
    file.as_os_str() == OsStr::new("-")
}

/// Standard input written to `<temp dir>/<name>`: the temp dir (removed when dropped) and the
/// file's path.
pub fn stdin_to_file(name: &str) -> anyhow::Result<(tempfile::TempDir, PathBuf)> {
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return Err(coded(
            ExitKind::Usage,
            format!("--name {name:?} must be a plain file name such as t.cpp"),
        ));
    }
    let mut text = Vec::new();
    // One byte more than a test may have, so an endless stream is refused by the input checks.
    std::io::stdin()
        .take(crate::input::MAX_TEST_BYTES as u64 + 1)
        .read_to_end(&mut text)
        .map_err(|e| coded(ExitKind::Input, format!("cannot read standard input: {e}")))?;
    let dir = tempfile::Builder::new()
        .prefix("mfppr-stdin-")
        .tempdir()
        .context("cannot create a temporary directory for standard input; check TMPDIR")?;
    let path = dir.path().join(name);
    std::fs::write(&path, text)
        .with_context(|| format!("cannot write standard input to {}", path.display()))?;
    Ok((dir, path))
}

/// Parse `K=V` (K not empty) for an environment flag; `form` is how its help writes it.
pub(crate) fn parse_env(s: &str, form: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(format!("`{s}` is not {form}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_validated() {
        assert_eq!(parse_secs("1.5").unwrap(), Duration::from_millis(1500));
        assert!(parse_secs("0").is_err());
        assert!(parse_secs("-3").is_err());
        assert!(parse_secs("inf").is_err());
        assert!(parse_secs("x").is_err());
        assert_eq!(parse_secs("86400").unwrap(), Duration::from_secs(86_400));
        assert!(parse_secs("86400.5").is_err());
        assert!(parse_secs("1e9").is_err());
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn joined_and_separate_forms() {
        let cwd = std::env::current_dir().unwrap();
        let f = CompilerFlags::parse(&strings(&[
            "-std=c++17",
            "-Ispec",
            "-I",
            "/abs",
            "-isystem",
            "sys",
            "-iquote/q",
            "-D",
            "EXECUTE",
            "-DN=3",
            "-UX",
            "-O0",
        ]))
        .unwrap();
        assert_eq!(
            f.include_dirs,
            vec![
                PathBuf::from("/q"),
                cwd.join("spec"),
                PathBuf::from("/abs"),
                cwd.join("sys")
            ]
        );
        assert_eq!(f.macros, strings(&["EXECUTE", "N=3", "!X"]));
        let spec = cwd.join("spec").display().to_string();
        let sys = cwd.join("sys").display().to_string();
        assert_eq!(
            f.flags,
            strings(&[
                "-std=c++17",
                "-I",
                &spec,
                "-I",
                "/abs",
                "-isystem",
                &sys,
                "-iquote",
                "/q",
                "-DEXECUTE",
                "-DN=3",
                "-UX",
                "-O0"
            ])
        );
        assert!(CompilerFlags::parse(&strings(&["-I"])).is_err());
        let linked =
            CompilerFlags::parse(&strings(&["-O1", "-lz3", "-l", "gmp", "-Wl,-rpath,/x"])).unwrap();
        assert_eq!(linked.flags, ["-O1"]);
        assert_eq!(linked.link, ["-lz3", "-lgmp", "-Wl,-rpath,/x"]);
        assert_eq!(
            linked.env(),
            [
                (CXXFLAGS_ENV.to_string(), "-O1".to_string()),
                (
                    LDFLAGS_ENV.to_string(),
                    "-lz3 -lgmp -Wl,-rpath,/x".to_string()
                )
            ]
        );
        assert!(CompilerFlags::parse(&strings(&["-l"])).is_err());
        assert_eq!(CompilerFlags::parse(&[]).unwrap().env_value(), None);
        assert_eq!(
            CompilerFlags::parse(&strings(&["-DA=a b"]))
                .unwrap()
                .env_value()
                .unwrap(),
            "'-DA=a b'"
        );
    }
}

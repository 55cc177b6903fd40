// Package settings reads and writes Prime's settings: how compaction,
// branch summarization and retries behave, which model writes summaries,
// the command hooks to run, and which projects the user trusts.
//
// # Files
//
// Two JSON files, in pi's format:
//
//   - global: <agentDir>/settings.json, where agentDir is
//     $PRIME_CODING_AGENT_DIR (a leading ~ is the home directory) or
//     ~/.prime/agent;
//   - project: <project>/.prime/agent/settings.json (pi's own is
//     <cwd>/.pi/settings.json). [FindProject] finds the
//     project from a working directory: the nearest ancestor holding a
//     .prime/agent directory, else the working directory itself.
//
// The agent directory ([DefaultAgentDir]) also holds the sessions, one
// folder per working directory in pi's layout ([SessionsDir]).
//
// An example:
//
//	{
//	  "compaction": {
//	    "enabled": true,
//	    "reserveTokens": 16384,
//	    "keepRecentTokens": 20000,
//	    "model": "anthropic/claude-haiku-4-5",
//	    "modelOverrides": {
//	      "openai/gpt-5": { "reserveTokens": 32768, "keepRecentTokens": 40000 }
//	    }
//	  },
//	  "branchSummary": { "reserveTokens": 16384, "skipPrompt": false },
//	  "retry": { "enabled": true, "maxRetries": 3, "baseDelayMs": 2000, "maxDelayMs": 60000 },
//	  "hooks": [
//	    { "event": "session_before_compact", "command": "./summarize.sh", "args": ["--short"], "timeoutMs": 30000 }
//	  ],
//	  "trustedProjects": ["/home/me/src/app"]
//	}
//
// Every key is optional; [Keys] lists the known ones and their defaults
// are pi's. compaction.model is Prime's own: a separate, cheaper or
// larger-window model for summaries ("provider/id"; unset means the
// session's model). So are compaction.background (default true: the
// summary is written in the background before the context fills up) and
// compaction.backgroundThreshold (default 80: where it starts, as a
// percentage, from 1 to 100, of the point where compaction starts). Keys
// Prime does not know are kept untouched: the files may carry all of pi's
// other settings.
//
// # Merging
//
// As in pi: project over global, objects merged one level deep, anything
// else (arrays included) replaced. So a project's "compaction" object
// overrides the global one key by key, but a project's
// compaction.modelOverrides map replaces the global map whole. Per-model
// overrides resolve field by field as in pi 1.6: the model's override, then
// the ordinary value, then the default. Values set at run time with
// [Settings.WithOverride] (command-line flags) win over everything.
//
// Two keys do not merge: "hooks" lists are joined, global first, because
// hooks run in load order; and "trustedProjects" is read from the global
// file only, since a cloned repository must not be able to trust itself.
//
// # Validation
//
// pi 1.6's rules, applied to every known key: booleans are true or false;
// token counts, retry counts and delays are whole numbers from 0 to
// 2^53-1 (JSON 2.0 and 1e3 are whole); models are "provider/id". null
// means "not set". A wrong type or a negative number is a [Problem] naming
// the file, line, column, key and value; that value is ignored, so the key
// resolves as if the file did not set it (pi 1.6 throws when it reads such
// a value; Prime keeps working and says why). A file that does not parse
// (or cannot be read, or holds something other than an object) is a
// Problem with its line and column; its whole scope falls back to the
// other layers and the defaults, and Prime refuses to write to it until it
// is fixed ([ErrBrokenFile]). Load never fails because of a file's content.
//
// # Trust
//
// A project's file is someone else's text until the user trusts the
// project (prime trust). Every key in the key table declares whether an
// untrusted project may set it: keys that only tune Prime may; keys that
// can run code or send data elsewhere (shellPath; hooks, which the hook
// package skips itself) may not, and their values are listed by
// [Settings.Ignored], shown as ignored by [Settings.Values] and reported
// as a [Problem] naming the key and the file. A model setting chooses
// among the providers the user configured (models.json is global only),
// so a project may set it. A project found above the working directory
// ([Options.WorkDir]) that is neither inside the user's home nor inside
// the working directory's git checkout applies only once trusted. And any
// settings file another user could change (internal/safepath) is ignored
// whole, global or project.
//
// # Writing
//
// [Settings.Set], [Settings.Unset], [Settings.Trust] and [Settings.Untrust]
// change one key by editing the file's text, not by re-encoding it: other
// keys keep their order, spacing and line endings, and a new key is added
// in the style of its neighbours. Each write takes the file's lock with
// the protocol of pi's proper-lockfile (a <file>.lock directory, stale
// after 10 s), re-reads the file under the lock so concurrent edits by pi,
// another Prime or an editor survive, and replaces the file atomically
// (temporary file, fsync, rename, fsync of the directory). A settings file that is a symbolic link
// is written through the link.
package settings

"""Linting one file: decode, prefilter, parse once, analyse once, run the rules, place findings."""

from __future__ import annotations

import ast
import gc
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable, Collection, List, Optional, Sequence, Set, Tuple

from torchdevlint import noqa, syntax, textsearch, torch_version as torch_versions
from torchdevlint.findings import PARSER_ERROR, READ_ERROR, SYNTAX_ERROR, Finding
from torchdevlint.rules.registry import ALL_RULES, DEFAULT_RULES, rule_classes
from torchdevlint.source import SourceError, decode_source

# LibCST, the analysis and the rule classes are imported where a file is parsed, not here: a
# run whose files are all cached or skipped by the prefilter never needs them (half a second).
if TYPE_CHECKING:
    import libcst as cst

    from torchdevlint import split
    from torchdevlint.analysis import Analysis
    from torchdevlint.analysis.model import Ctx
    from torchdevlint.fixes.model import Fix, FixOptions


@dataclass
class FileResult:
    path: str
    findings: List[Finding] = field(default_factory=list)
    # A file-level diagnostic when the file could not be analysed (E999, E902, TDL999).
    error: Optional[Finding] = None
    internal_error: bool = False
    # Kept for --fix: the parsed module and the violations behind the findings.
    module: Optional[cst.Module] = field(default=None, repr=False)
    analysis: Optional[Analysis] = field(default=None, repr=False, compare=False)
    # Set for notebooks: the torchdevlint.notebook.Notebook whose program ``module`` is.
    notebook: Optional[object] = field(default=None, repr=False)
    # Set when huge literals were analysed apart (torchdevlint.split): ``module`` is then the
    # file with those literals blanked out, and this is the file's real text.
    split_source: Optional[str] = field(default=None, repr=False)
    # For such a file: the fix context of ``module`` in the real text (the elements' fixes
    # were built in ``_analyse_split``), and whether one of those fixes reached outside its
    # element, so that fixes must be built on the whole file's tree after all.
    fix_context: Optional[object] = field(default=None, repr=False, compare=False)
    split_fixes_need_whole: bool = False

    def drop_tree(self) -> None:
        """Keep only plain data (findings, error): the analysis's cycles are broken, so the
        tree is freed here, by reference counting (see ``gc_paused``)."""
        if self.analysis is not None:
            self.analysis.release()
        self.module = self.analysis = self.notebook = self.split_source = self.fix_context = None


_PREFILTERS: dict = {}


def _prefilter(rules: Sequence[type]) -> List[List[textsearch.TextTest]]:
    """For each rule, the patterns that must all be found in a file for it to report there."""
    key = tuple(rule.code for rule in rules)
    patterns = _PREFILTERS.get(key)
    if patterns is None:
        patterns = []
        compiled: dict = {}  # one object per text: rules that share a pattern share its search
        for rule in rules:
            required = rule.required_text
            required = (required,) if isinstance(required, str) else required
            patterns.append([compiled.get(text) or compiled.setdefault(text, textsearch.TextTest(text))
                             for text in required])
        _PREFILTERS[key] = patterns
    return patterns


# Rules whose evidence of a device may come from the callers of the file's functions in other
# files of the project (``Placement.every_caller``): the index of their ``required_text``
# that asks for that evidence in the file's own text (a move, a ``device``). A file whose
# functions another file calls with a moved model, a device loader or a device tensor is a
# candidate without it, and without the rule's ast test, which asks for the same evidence.
_EVIDENCE_FROM_CALLERS = {"TDL004": 0, "TDL008": 1, "TDL011": 0}


def candidate_rules(source: str, rules: Sequence[type], tree: Optional[ast.AST] = None,
                    path: str = "") -> list:
    """The rules that could report something in ``source`` (and in ``tree``, Python's ast of
    it, when the caller has one): the only ones worth running, and none means no parse.
    ``path``: where the file lies, for the project's word on its functions' callers."""
    searched: dict = {}  # pattern -> found (TDL008 and TDL011 share one; torch's name, three)

    def found(pattern: textsearch.TextTest) -> bool:
        answer = searched.get(pattern)
        if answer is None:
            answer = searched[pattern] = pattern.found(source)
        return answer

    candidates, placed_by_callers, asked = [], [], []
    for rule, required in zip(rules, _prefilter(rules)):
        if all(found(pattern) for pattern in required):
            candidates.append(rule)
            continue
        waived = _EVIDENCE_FROM_CALLERS.get(rule.code)
        if waived is None or not path or not all(
                found(pattern) for i, pattern in enumerate(required) if i != waived):
            continue
        if not asked:
            from torchdevlint.project_index import placed_by_callers as placed
            asked.append(placed(path))
        if asked[0]:
            placed_by_callers.append(rule)
    # The ast tests only matter when they can spare the parse: when every candidate has one.
    if tree is None or not candidates:
        return candidates + placed_by_callers
    from torchdevlint.rules.prefilter import forget_walk, has_ast_prefilter, passes_ast_prefilter
    if all(map(has_ast_prefilter, candidates)):
        try:
            candidates = [rule for rule in candidates
                          if passes_ast_prefilter(rule, tree, source)]
        finally:
            forget_walk()  # (the tests' shared walk of the tree: not kept past this file)
    return candidates + placed_by_callers


def _diagnostic(path: str, code: str, message: str, line: int = 1, column: int = 1) -> Finding:
    return Finding(path, max(line, 1), max(column, 1), code, message)


def _syntax_check(path: str, source: str,
                  target: Optional[syntax.Version] = None) -> Optional[Finding]:
    """E999 with Python's own message (as flake8 reports it) if the file is not valid Python
    for the target version (see ``torchdevlint.syntax``)."""
    error = syntax.syntax_error(source, target or syntax.NEWEST)
    if error is None:
        return None
    message, line, column = error
    return _diagnostic(path, SYNTAX_ERROR, message, line, column)


def _parse_error(path: str, source: str, error: cst.ParserSyntaxError,
                 target: Optional[syntax.Version] = None) -> Finding:
    python_error = _syntax_check(path, source, target)
    if python_error is not None:
        return python_error
    message = " ".join(error.message.split())
    return _diagnostic(path, PARSER_ERROR, f"LibCST cannot parse this file: {message}",
                       error.raw_line, error.raw_column + 1)


def lint_bytes(data: bytes, path: str, rules: Optional[Sequence[type]] = DEFAULT_RULES,
               apply_noqa: bool = True, prefilter: bool = True,
               target: Optional[syntax.Version] = None,
               torch_version: torch_versions.Version = torch_versions.DEFAULT,
               parser: Optional[Callable[[str], cst.Module]] = None) -> FileResult:
    try:
        source = decode_source(data).text
    except SourceError as exc:
        return FileResult(path, error=_diagnostic(path, READ_ERROR, str(exc), exc.line, exc.column))
    return lint_source(source, path, rules, apply_noqa, prefilter, target=target,
                       torch_version=torch_version, parser=parser)


def lint_source(source: str, path: str, rules: Optional[Sequence[type]] = DEFAULT_RULES,
                apply_noqa: bool = True, prefilter: bool = True,
                check_syntax: bool = True, split_large: bool = True,
                tree: Optional[ast.AST] = None,
                target: Optional[syntax.Version] = None,
                torch_version: torch_versions.Version = torch_versions.DEFAULT,
                parser: Optional[Callable[[str], cst.Module]] = None,
                in_parts: bool = True, unseen_calls: frozenset = frozenset()) -> FileResult:
    """``prefilter=False`` parses every file and runs every rule (to check that the
    prefilters lose nothing); ``check_syntax=False`` is for callers that report syntax errors
    themselves (flake8); ``split_large=False`` parses huge literal tables whole (``--fix``
    needs the whole tree); ``tree``, Python's ast of ``source``, sharpens the prefilter;
    ``target``: the Python version whose syntax the file must be (default ``syntax.NEWEST``);
    ``rules``: None for every rule (the default: the rules on by default, opt-in ones left
    out); ``torch_version``: the torch version messages and fixes write code for;
    ``parser``: what parses ``source`` into the tree LibCST's ``parse_module`` gives (the
    server's ``Reparser``, which parses only what an edit changed; huge files are split
    and parsed in parts instead); ``in_parts``: a module of ``chunks.LARGE_MODULE_CHARS``
    or more is linted in parts (``_lint_in_parts``); ``unseen_calls``: names called where
    the analysis cannot see (another part of the module)."""
    if rules is None:
        rules = ALL_RULES
    if in_parts and len(source) >= _large_module_chars():
        return _lint_in_parts(source, path, rules, apply_noqa, prefilter, check_syntax,
                              split_large, target, torch_version)
    result = FileResult(path)
    if check_syntax:
        # Python's own parser judges every file, whatever the prefilter says, so that the
        # verdict never depends on which rules could report. It costs 11-18 % of a LibCST
        # parse where LibCST runs too, and catches what LibCST accepts and Python does not
        # (201 nested brackets, assignments to calls, syntax newer than the target). Its
        # tree then sharpens the prefilter, as flake8's does under the plugin.
        checked, error = syntax.checked_tree(source, target or syntax.NEWEST)
        if error is not None:
            result.error = _diagnostic(path, SYNTAX_ERROR, *error)
            return result
        tree = tree if tree is not None else checked
    if prefilter:
        rules = candidate_rules(source, rules, tree, path)
    if not rules:
        return result
    exemption = _file_exemption(source) if apply_noqa else None
    if exemption is not None and noqa.is_blanket(exemption):
        return result
    from torchdevlint import split
    analysed_source = source
    deep = syntax.too_deep(source)
    if deep is not None:
        # LibCST would crash (a segfault) or take minutes on such an expression: it is
        # replaced by ``(...)`` and the rest of the file analysed; one diagnostic for the
        # file where that cannot be done
        analysed_source = split.without_deep_expressions(source, tree)
        if analysed_source is None:
            result.error = _diagnostic(path, PARSER_ERROR, deep[0], deep[1])
            return result
    rules = rule_classes(rules)  # (the first file that gets this far imports them)
    plan = None
    if split_large and len(source) >= split.LARGE_FILE_CHARS:
        plan = split.plan_split(analysed_source)
    analysed = _analyse_split(analysed_source, path, rules, plan, torch_version, unseen_calls) \
        if plan is not None else None
    if analysed is None:
        analysed = _analyse(analysed_source, path, rules, torch_version, parser, unseen_calls)
    result = analysed
    if analysed_source is not source and result.module is not None:
        result.split_source = source  # (the module's text has the same lines and columns)
    if apply_noqa and result.findings and noqa.may_suppress(source):
        index = noqa.NoqaIndex(noqa.split_lines(source), tree)
        result.findings = [f for f in result.findings if not index.suppressed(f.code, f.line)]
    if exemption is not None:
        result.findings = noqa.exempt_findings(result.findings, exemption)
    return result


def _file_exemption(source: str) -> Optional[frozenset]:
    """What the file-level ``# flake8: noqa`` / ``# ruff: noqa[: CODES]`` lines of ``source``
    exempt it from (``noqa.file_exemption``), without splitting lines where there are none."""
    return noqa.file_exemption(noqa.split_lines(source)) if noqa.may_exempt_file(source) else None


def _large_module_chars() -> int:
    from torchdevlint.chunks import LARGE_MODULE_CHARS
    return LARGE_MODULE_CHARS


def _lint_in_parts(source: str, path: str, rules: Sequence[type], apply_noqa: bool,
                   prefilter: bool, check_syntax: bool, split_large: bool,
                   target: Optional[syntax.Version],
                   torch_version: torch_versions.Version) -> FileResult:
    """``lint_source`` for a huge module, one part of whole top-level statements at a time
    (see ``torchdevlint.chunks``): each part's findings in the file's lines, with the fixes
    built while its tree was alive; E999 as the file's only diagnostic, as for a whole file."""
    from torchdevlint import chunks
    parts = chunks.plan_parts(source)
    if len(parts) < 2:
        return lint_source(source, path, rules, apply_noqa, prefilter, check_syntax,
                           split_large, target=target, torch_version=torch_version,
                           in_parts=False)
    result = FileResult(path)
    exemption = _file_exemption(source) if apply_noqa else None
    if exemption is not None and noqa.is_blanket(exemption):
        rules = []  # (the syntax is still checked)
    called = chunks.called_names(source) if rules else None
    for index, part in enumerate(parts):
        text = part.text(source)
        unseen = frozenset()
        if called is not None:
            here = chunks.called_names(source[part.start:part.end])
            unseen = frozenset(name for name, count in called.items() if count > here[name])
        linted = lint_source(text, path, rules, apply_noqa, prefilter, check_syntax,
                             split_large, target=target, torch_version=torch_version,
                             in_parts=False, unseen_calls=unseen)
        if linted.error is not None:
            error = replace(linted.error, line=max(part.file_line(linted.error.line), 1))
            if error.code == SYNTAX_ERROR:
                return FileResult(path, error=error)
            result.error = result.error or error  # (TDL999: the other parts' findings stay)
        attach_located_fixes(linted, text)  # (while the part's tree is alive)
        result.findings.extend(_in_file(finding, part, index) for finding in linted.findings
                               if finding.line > part.prelude_lines)
        linted.drop_tree()
    if exemption is not None:  # (a part's text may not hold the file's # ruff: noqa line)
        result.findings = noqa.exempt_findings(result.findings, exemption)
    result.findings.sort(key=lambda f: f.sort_key)
    return result


def _in_file(finding: Finding, part, index: int) -> Finding:
    """A finding of ``part``'s text (prelude included) in the file's lines and offsets; its
    fix is dropped if it edits the prelude, or adds a module-level definition (which would
    land at the top of a part, not of the module) after the first part."""
    from torchdevlint.fixes.model import BuiltFix
    shift = part.start - len(part.prelude)
    fix = finding.available_fix
    if fix is not None:
        if any(edit.start < len(part.prelude) or (index and edit.exclusive)
               for edit in fix.edits):
            fix = None
        else:
            fix = replace(fix, edits=tuple(replace(edit, start=edit.start + shift,
                                                   end=edit.end + shift) for edit in fix.edits),
                          located=tuple(replace(where, row=part.file_line(where.row),
                                                end_row=part.file_line(where.end_row))
                                        for where in fix.located))
    return replace(finding, line=part.file_line(finding.line),
                   end_line=part.file_line(finding.end_line) if finding.end_line else 0,
                   fix=BuiltFix(fix) if fix is not None else None, available_fix=fix)


def _analyse(source: str, path: str, rules: Sequence[type],
             torch_version: torch_versions.Version = torch_versions.DEFAULT,
             parser: Optional[Callable[[str], cst.Module]] = None,
             unseen_calls: frozenset = frozenset()) -> FileResult:
    import libcst as cst

    from torchdevlint.analysis import Analysis
    result = FileResult(path)
    spaced: Optional[Tuple[str, dict]] = None
    try:
        try:
            module = (parser or _parse)(source)
        except cst.CSTValidationError:
            # LibCST rejects valid code it parsed: a keyword right before a parenthesized
            # conditional (``assert(a if c else b)``, ``while(...)``; LibCST issue 1095).
            # The same code with a space after each such keyword parses; its findings are
            # placed back on the text as written, without fixes (their edits would carry it)
            spaced = _keywords_spaced(source)
            if spaced is None:
                raise
            module = (parser or _parse)(spaced[0])
    except cst.ParserSyntaxError as exc:
        result.error = _parse_error(path, source, exc)
        return result
    except RecursionError:
        result.error = _diagnostic(path, PARSER_ERROR, "file is too deeply nested to parse")
        return result
    result.module = module
    try:
        result.analysis = Analysis(module, facts=declared_facts(rules))
        result.analysis.collected.unseen_call_names.update(unseen_calls)
        result.analysis.torch_version = torch_version
        result.analysis.source = source if spaced is None else spaced[0]
        result.analysis.path = path
        violations = run_rules(module, rules, result.analysis)
        result.findings = place(module, result.analysis.source, path, violations)
        if spaced is not None:
            result.findings = [_unspaced(finding, spaced[1]) for finding in result.findings]
    except RecursionError:
        result.error = _diagnostic(path, PARSER_ERROR, "file is too deeply nested to analyse")
    return result


def _analyse_split(source: str, path: str, rules: Sequence[type],
                   plan: split.SplitPlan,
                   torch_version: torch_versions.Version = torch_versions.DEFAULT,
                   unseen_calls: frozenset = frozenset()) -> Optional[FileResult]:
    """``_analyse`` for a file whose huge literals are analysed one element at a time (see
    ``torchdevlint.split``), or None when the file must be analysed whole after all (anything
    LibCST rejects, so that the whole file's diagnostic is the one reported).

    An element's findings get their fixes here, while its tree is alive (``BuiltFix``):
    building them later would need the whole file's tree, which is what splitting avoids
    (730 MB for torch's ``common_methods_invocations.py``)."""
    import libcst as cst

    from torchdevlint import split
    from torchdevlint.analysis import Analysis
    from torchdevlint.fixes.context import ElementFixContext
    from torchdevlint.fixes.model import BuiltFix, FixPlan
    from torchdevlint.positions import node_positions
    try:
        module = _parse(plan.skeleton)
        analysis = Analysis(module, facts=declared_facts(rules))
        analysis.collected.unseen_call_names.update(unseen_calls)
        analysis.torch_version = torch_version
        analysis.source = plan.skeleton
        analysis.path = path
        statements = [small for statement in module.body
                      for small in (statement.body if isinstance(statement, cst.SimpleStatementLine)
                                    else (statement,))]
        findings: List[Finding] = []
        outside: List[tuple] = []  # violations found from an element at a node outside it
        whole = None  # the file's fix context, made for the first element with a fix
        needs_whole = False
        for literal in plan.literals:
            ctx = _statement_ctx(statements, literal.statement_index, analysis)
            if ctx is None:
                return None
            for element in literal.elements:
                text = split.element_source(source, element, literal.brackets)
                fragment = _parse(text)
                table = fragment.body[0].body[0].value  # the one-element list or dict
                fragment_analysis = Analysis.of_fragment(fragment, table, ctx, analysis)
                analysis.collected.unseen_call_names.update(fragment_analysis.collected.calls_by_name)
                violations = run_rules(fragment, rules, fragment_analysis)
                if not violations:
                    fragment_analysis.release()  # its tree goes now, not at a collection
                    continue
                positions = node_positions(fragment, text, (v.node for _, v in violations))
                element_ctx = None
                for code, violation in violations:
                    position = positions.get(id(violation.node))
                    if position is None:
                        outside.append((code, violation))
                        continue
                    finding = _finding(path, code, violation, _shift(position, element))
                    if isinstance(finding.fix, FixPlan):
                        if whole is None:
                            whole = split_fix_context(source, module, analysis)
                        if element_ctx is None:
                            element_ctx = ElementFixContext(whole, text, fragment,
                                                            fragment_analysis, element.start - 1)
                        fix = finding.fix.build(finding, element_ctx)
                        needs_whole = needs_whole or (fix is not None and
                                                      not element_ctx.within(fix))
                        finding = replace(finding, fix=BuiltFix(fix) if fix is not None else None)
                    findings.append(finding)
                fragment_analysis.release()
        violations = run_rules(module, rules, analysis)
        seen = {(code, id(v.node)) for code, v in violations}
        for code, violation in outside:
            if (code, id(violation.node)) not in seen:
                seen.add((code, id(violation.node)))
                violations.append((code, violation))
        findings.extend(place(module, plan.skeleton, path, violations))
    except (cst.ParserSyntaxError, RecursionError):
        return None
    findings.sort(key=lambda f: f.sort_key)
    return FileResult(path, findings, module=module, analysis=analysis, split_source=source,
                      fix_context=whole, split_fixes_need_whole=needs_whole)


def split_fix_context(source: str, module: cst.Module, analysis: Analysis):
    """The fix context of a split file's blanked-out module (``FileResult.split_source``) in
    its real text: the blanks keep every offset, and the names in use are the whole file's."""
    from torchdevlint.fixes.context import FixContext, names_in_tree
    context = FixContext(source, module, analysis)
    context.names_from = lambda: names_in_tree(ast.parse(source))  # (rarely asked: parsed then)
    return context


def _statement_ctx(statements: list, index: int, analysis: Analysis) -> Optional[Ctx]:
    """The context the blanked literal of module statement ``index`` was analysed in."""
    import libcst as cst
    if index >= len(statements):
        return None
    statement = statements[index]
    if isinstance(statement, cst.Assign):
        target = statement.targets[0].target
    elif isinstance(statement, cst.AnnAssign):
        target = statement.target
    else:
        return None
    if not isinstance(target, cst.Name) or \
            not isinstance(statement.value, (cst.List, cst.Tuple, cst.Dict)):
        return None
    module_scope = analysis.collected.module_scope
    for binding in module_scope.bindings.get(target.value, ()):
        if binding.value is statement.value:
            return binding.ctx
    return None


def _shift(position: tuple, element: split.Element) -> tuple:
    """A position in ``[element]`` (or ``{element}``) as a position in the file."""
    line, column, end_line, end_column = position

    def move(line: int, column: int) -> tuple:
        if line == 1:
            return element.line, element.column + column - 2  # 2: the bracket, 1-based columns
        return element.line + line - 1, column

    return (*move(line, column), *move(end_line, end_column))


def _finding(path: str, code: str, violation, position: tuple) -> Finding:
    line, column, end_line, end_column = position
    return Finding(path, line, column, code, violation.message, end_line, end_column,
                   fix=violation.fix)


@contextmanager
def gc_paused():
    """The cyclic garbage collector paused. A parse and its analysis allocate millions of
    objects and almost no garbage cycles; each automatic collection meanwhile would traverse
    the growing tree again (15-25% of a parse).

    Front ends that only keep a file's findings lint it with collections paused, then
    ``Analysis.release()`` it and drop the tree before they resume, so that reference counting
    frees it all: a tree still alive when collections resume is traversed by the first one
    (and again by the older generations), which costs more than collections during the
    analysis would have. (About 12% of a lint under flake8 before, under 1% after.)"""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def _keywords_spaced(source: str) -> Optional[Tuple[str, dict]]:
    """``source`` with a space after every keyword written right before ``(`` (``assert(``,
    ``while(``, ``in(``), and {line: [0-based columns of the spaces]}; None when it has none
    or does not tokenize."""
    import io
    import keyword
    import tokenize
    inserted: dict = {}
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    for token, following in zip(tokens, tokens[1:]):
        if token.type == tokenize.NAME and keyword.iskeyword(token.string) and \
                following.type == tokenize.OP and following.string == "(" and \
                following.start == token.end:
            inserted.setdefault(token.end[0], []).append(token.end[1])
    if not inserted:
        return None
    lines = source.splitlines(keepends=True)
    for row, columns in inserted.items():
        line = lines[row - 1]
        for column in sorted(columns, reverse=True):
            line = line[:column] + " " + line[column:]
        lines[row - 1] = line
    return "".join(lines), inserted


def _unspaced(finding: Finding, inserted: dict) -> Finding:
    """``finding`` of the spaced text (``_keywords_spaced``) placed on the text as written,
    without a fix."""
    def back(row: int, column: int) -> int:  # (1-based columns; a space sits before ``column``)
        return column - sum(1 for at in inserted.get(row, ()) if at + 1 < column)
    return replace(finding, column=back(finding.line, finding.column),
                   end_column=back(finding.end_line, finding.end_column)
                   if finding.end_line else finding.end_column,
                   fix=None, available_fix=None)


def _parse(source: str) -> cst.Module:
    import libcst as cst
    with gc_paused():
        return cst.parse_module(source)


def declared_facts(rules: Sequence[type]) -> frozenset:
    """The facts the rules that run on a file declare: the only ones it may build."""
    return frozenset().union(*(rule.facts for rule in rules))


def run_rules(module: cst.Module, rules: Sequence[type], analysis: Analysis,
              deferences: Optional[Sequence["Deference"]] = None) -> List[tuple]:
    """``(code, violation)`` for every violation the rules find, less those a rule leaves to
    another (``DEFERENCES``)."""
    violations = []
    for rule_class in rules:
        for violation in rule_class().check(analysis):
            violations.append((rule_class.code, violation))
    return _without_deferred(module, violations, analysis,
                             DEFERENCES if deferences is None else deferences)


# -- where one rule leaves a finding to another ------------------------------------------------

@dataclass(frozen=True)
class Deference:
    """``rule`` stays silent in ``region``, which is what the rules ``to`` are about: one bug,
    one report, from the rule whose message and fix fit it. ``holds(module, analysis, nodes)``
    gives the ids of those of the rule's violation nodes that lie in the region; ``example``
    is code where ``rule`` would report in the region (``tests/test_deference.py`` runs it
    with and without the entry). The rule stays silent whether or not the rules ``to`` run:
    the region is theirs."""

    rule: str
    to: Tuple[str, ...]
    region: str
    holds: Callable[["cst.Module", "Analysis", Collection["cst.CSTNode"]], Set[int]]
    example: str


def _in_loader_loops(module: cst.Module, analysis: Analysis,
                     nodes: Collection[cst.CSTNode]) -> Set[int]:
    """The ids of ``nodes`` inside a ``for`` loop over a data loader (``Analysis.loader_paths``,
    in the scope of the function or module that holds the node) that read a value the loop
    takes from the loader as it came: a name the loop's target binds, or one unpacked or
    indexed out of such a name in the loop body (``x, y = batch``, ``x = batch["x"]``).
    Those are TDL004's batches; an operation of values the code made itself (a factory, a
    model's output, ``real = Variable(imgs.type(T))``) in such a loop is not (issue 28:
    WGAN-div's ``autograd.grad(..., torch.ones(n, 1))``)."""
    import libcst as cst

    from torchdevlint.analysis import iter_children

    batches: dict = {}  # id(loop) -> its batch names (empty: not a loop over a loader)

    def loader_batches(loop: cst.For, scope) -> Set[str]:
        found = batches.get(id(loop))
        if found is None:  # (asked once a loop, not once a node in it)
            found = batches[id(loop)] = batch_names(loop) \
                if analysis.loader_paths(loop.iter, scope) else set()  # the one answer
        return found

    def batch_names(loop: cst.For) -> Set[str]:
        names = {n.value for n in _walk(loop.target) if isinstance(n, cst.Name)}
        assigns = [node for node in _walk(loop.body) if isinstance(node, cst.Assign)]
        grown = True
        while grown:
            grown = False
            for node in assigns:
                if _taken_from(node.value, names):
                    bound = {n.value for target in node.targets for n in _walk(target.target)
                             if isinstance(n, cst.Name)}
                    grown = grown or not bound <= names
                    names |= bound
        return names

    def _walk(node):
        stack = [node]
        while stack:
            current = stack.pop()
            yield current
            if not isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                stack.extend(iter_children(current))

    def _taken_from(value, names: Set[str]) -> bool:
        while isinstance(value, (cst.Subscript, cst.Attribute)):
            value = value.value
        return isinstance(value, cst.Name) and value.value in names

    def reads(node, names: Set[str]) -> bool:
        return any(isinstance(n, cst.Name) and n.value in names for n in _walk(node))

    wanted = {id(node) for node in nodes}
    scopes = {id(info.node): info.scope for info in analysis.collected.functions}
    found: Set[int] = set()
    stack = [(module, analysis.collected.module_scope, ())]
    while stack:
        node, scope, loops = stack.pop()
        if id(node) in wanted and any(
                loader_batches(loop, scope) and reads(node, loader_batches(loop, scope))
                for loop in loops) and not (  # a loss module's own CPU weights: not a batch
                isinstance(node, cst.Call) and isinstance(node.func, cst.Name)
                and analysis.placement.tensors_held(node.func, scope)):
            found.add(id(node))
        kind = type(node)
        if kind is cst.FunctionDef:  # a function's code is its own: its loops start here
            scope, loops = scopes.get(id(node), scope), ()
        elif kind is cst.For:
            loops = loops + (node,)
        stack.extend((child, scope, loops) for child in iter_children(node))
    return found


# Every place where one rule defers to another. A rule does not test for another rule's
# region itself: it reports, and the engine drops what this table leaves to the other rule.
DEFERENCES: Tuple[Deference, ...] = (
    Deference("TDL011", ("TDL004",), "the batches of a `for` loop over a data loader",
              _in_loader_loops,
              "import torch\n\n\ndef f(model, loader, device):\n"
              "    w = torch.randn(3, device=device)\n"
              "    for x, y in loader:\n"
              "        print(w + x.cpu())\n"),
)


def _without_deferred(module: cst.Module, violations: List[tuple], analysis: Analysis,
                      deferences: Sequence[Deference]) -> List[tuple]:
    for deference in deferences:
        # (a finding's subject where it names one: ``model(x, state)`` reads the loader's
        # ``x``, but what it reports is ``state``, which the code made itself)
        nodes = [v.subject or v.node for code, v in violations if code == deference.rule]
        if nodes:
            deferred = deference.holds(module, analysis, nodes)
            if deferred:
                violations = [(code, v) for code, v in violations
                              if code != deference.rule or id(v.subject or v.node) not in deferred]
    return violations


def place(module: cst.Module, source: str, path: str, violations: List[tuple]) -> List[Finding]:
    if not violations:
        return []
    from torchdevlint.positions import node_positions
    positions = node_positions(module, source, (v.node for _, v in violations))
    findings = []
    for code, violation in violations:
        position = positions.get(id(violation.node))
        if position is not None:
            findings.append(_finding(path, code, violation, position))
    findings.sort(key=lambda f: f.sort_key)
    return findings


def build_fix(finding: Finding, ctx) -> Optional[Fix]:
    """The fix the finding's rule plans for it here (``ctx``: a ``FixContext``), or None."""
    from torchdevlint.fixes.model import FixPlan
    plan = finding.fix
    return plan.build(finding, ctx) if isinstance(plan, FixPlan) else None


def attach_fixes(result: FileResult, options: Optional[FixOptions] = None,
                 rules: Optional[Sequence[type]] = None, text: Optional[str] = None) -> None:
    """Give each finding the ``Fix`` its plan builds (``available_fix``; None when it gets
    none) and drop the plan, for reports that say whether a fix is available and whether it is
    safe. ``options``: default every fix, unsafe ones included; ``rules``: the rules the
    result was linted with (None: every rule)."""
    if result.module is None or result.analysis is None or \
            not any(f.fix is not None for f in result.findings):
        return
    from torchdevlint.fixes.context import FixContext
    from torchdevlint.fixes.model import FixOptions
    options = options or FixOptions(unsafe=True)
    module, analysis, findings = result.module, result.analysis, result.findings
    ctx = None
    if result.split_source is not None and not result.split_fixes_need_whole:
        # Huge literals were analysed apart, and their elements' fixes built then (``BuiltFix``)
        ctx = result.fix_context or split_fix_context(result.split_source, module, analysis)
    elif result.split_source is not None:
        # One of those fixes reached outside its element: it needs the whole tree after all.
        codes = {f.code for f in findings}
        rules = ALL_RULES if rules is None else rules
        whole = lint_source(result.split_source, result.path,
                            [rule for rule in rules if rule.code in codes], split_large=False,
                            torch_version=analysis.torch_version, in_parts=False)
        payloads = {(f.line, f.column, f.code): f.fix for f in whole.findings}
        module, analysis = whole.module, whole.analysis
        findings = [replace(f, fix=payloads.get((f.line, f.column, f.code))) for f in findings]
        if module is None or analysis is None:
            return
    # ``text``: the source the module was parsed from, when the caller has it (``module.code``
    # generates it again from the tree: a tenth of a parse)
    if ctx is None:
        ctx = FixContext(text if text is not None and module is result.module else module.code,
                         module, analysis)
    resolved = []
    for finding in findings:
        fix = None
        if finding.fix is not None:
            fix = build_fix(finding, ctx)
            if fix is not None and (not options.allows(replace(fix, safe=True))
                                    or (options.apply_noqa
                                        and any(ctx.touches_noqa(edit) for edit in fix.edits))):
                fix = None
            if fix is not None:
                fix.applicable = options.allows(fix)
        resolved.append(replace(finding, fix=None, available_fix=fix))
    result.findings = resolved
    if analysis is not result.analysis:
        analysis.release()  # the whole-file analysis made here: free it with its tree


def attach_located_fixes(result: FileResult, text: Optional[str] = None) -> None:
    """Give the findings of a freshly linted ``FileResult`` (tree still there) every fix their
    plans build, with ``located`` edits (``fixes.locate``: what reports and the cache keep).
    ``text``: the source the module was parsed from, if the caller has it (else it is
    generated from the tree). A failing fix builder costs the fixes, not the findings."""
    if not any(f.fix is not None for f in result.findings):
        return
    from torchdevlint.fixes.model import EVERY_FIX, place_edits
    if result.module is None:
        if text is not None and result.notebook is not None:
            # a huge program linted in parts (``_lint_in_parts``), whose fixes were built and
            # placed part by part in the program's rows: here, in its cells' rows
            place_edits(result.findings, text, result.notebook)
        return
    try:
        attach_fixes(result, EVERY_FIX, text=text)
    except Exception:  # a bug in one rule's fix must not hide the file's findings
        result.findings = [replace(f, fix=None, available_fix=None) for f in result.findings]
        return
    if result.split_source is not None:
        text = result.split_source
    elif text is None:
        text = result.module.code
    place_edits(result.findings, text, result.notebook)

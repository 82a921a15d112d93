"""What an expression of a codebase is, read not run (tools/codebase.py):
followed through names, imports, attributes, calls and returns, within the
codebase, until it is one of the codebase's own (a module, a function, a
class, an Instance of one) or a dotted name from outside it. A call of an
outside name adds "()": `session` imported from .clients, where
`session = requests.Session()`, is "requests.Session()", and `session.get`
is "requests.Session().get". None where the code does not say (a dict's
item, a loop's variable, an unannotated parameter).

    Origins(index).value(expression, scope)   scope: a Function or a Module
"""

import ast
import builtins
from dataclasses import dataclass

from tools.blocking_calls import MAKERS
from tools.codebase import Class, Function, Module, is_none, walk


@dataclass(frozen=True, eq=False)
class Instance:
    cls: Class


class Origins:
    def __init__(self, index):
        self.index = index
        self.busy = set()  # (expression, scope) or dotted name being read: a cycle is None

    def value(self, expression, scope):
        key = (id(expression), id(scope))
        if key in self.busy:
            return None
        self.busy.add(key)
        try:
            return self.read(expression, scope)
        finally:
            self.busy.discard(key)

    def function(self, expression, scope):
        """The codebase's function an expression names, or None."""
        found = self.value(expression, scope)
        return found if isinstance(found, Function) else None

    def read(self, expression, scope):
        if isinstance(expression, ast.Name):
            return self.named(expression.id, scope)
        if isinstance(expression, ast.Attribute):
            return self.member(self.value(expression.value, scope), expression.attr)
        if isinstance(expression, ast.Call):
            return self.called(self.value(expression.func, scope))
        if isinstance(expression, ast.Subscript) and isinstance(expression.slice, ast.Constant):
            if getattr(expression.value, "attr", None) == "extensions":  # app.extensions["pool"]
                registered = self.index.extensions(expression.slice.value)
                return registered and self.value(*registered[0])
        return None

    def named(self, name, scope):
        """A name where scope reads it: its own, an enclosing function's, the module's."""
        module, function = scope.module, scope if isinstance(scope, Function) else None
        while function is not None:
            if name in ("self", "cls") and function.owner:
                cls = module.classes[function.owner]
                return Instance(cls) if name == "self" else cls
            if name in function.names:
                expression, annotated = function.names[name]
                found = self.value(expression, function)
                return self.called(found) if annotated else found
            function = function.parent
        if name in module.functions:
            return self.made(module.functions[name])
        if name in module.classes:
            return module.classes[name]
        if name in module.names:
            return self.value(module.names[name][0], module)
        if name in module.imports:
            return self.dotted(module.imports[name])
        return name if name in dir(builtins) else None

    def dotted(self, name):
        """A dotted name from an import: the codebase's, or the name itself."""
        if self.index.module(name):
            return self.index.module(name)
        parent, _, last = name.rpartition(".")
        module = self.index.module(parent)
        if not module:
            return name
        if name in self.busy:  # two modules importing the name from each other
            return None
        self.busy.add(name)
        try:
            return self.member(module, last)
        finally:
            self.busy.discard(name)

    def member(self, found, attribute):
        if found is None:
            return None
        if isinstance(found, str):
            return f"{found}.{attribute}"
        if isinstance(found, Module):
            if attribute in found.functions or attribute in found.names:
                return self.named(attribute, found)
            if attribute in found.classes:
                return found.classes[attribute]
            return self.dotted(f"{found.name}.{attribute}")
        if isinstance(found, Class | Instance):
            return self.attribute(found, attribute)
        return None

    def attribute(self, found, attribute):
        """A class's or an instance's attribute: a method, a field, a name of
        its body, or its base's (from outside: base.attribute, base().attribute)."""
        cls = found.cls if isinstance(found, Instance) else found
        if attribute in cls.methods:
            return self.made(cls.methods[attribute])
        if isinstance(found, Instance) and attribute in cls.fields:
            return self.value(*cls.fields[attribute])
        if attribute in cls.attributes:
            return self.value(cls.attributes[attribute], cls.module)
        bases = [self.value(base, cls.module) for base in cls.node.bases]
        # What an object made provides (a model's db.Model) before a mixin's.
        for inherited in sorted(bases, key=lambda base: "()" not in str(base)):
            if isinstance(inherited, Class):
                instance = isinstance(found, Instance)
                return self.attribute(Instance(inherited) if instance else inherited, attribute)
            if isinstance(inherited, str) and inherited != "object":
                made = inherited + ("()" if isinstance(found, Instance) else "")
                return f"{made}.{attribute}"
        return None

    def made(self, function):
        """A function, or what a decorator from outside made of it (MAKERS:
        @celery.task makes a task)."""
        for decorator in function.node.decorator_list:
            name = self.value(decorator, function.module)
            if isinstance(name, str) and name in MAKERS:
                return MAKERS[name]
        return function

    def called(self, found):
        """What calling found gives: an outside name's "()", a class's
        Instance, a function's return value."""
        if isinstance(found, str):
            return f"{found}()"
        if isinstance(found, Class):
            return Instance(found)
        if isinstance(found, Function):
            for node in walk(found.node.body):
                if isinstance(node, ast.Return) and node.value and not is_none(node.value):
                    return self.value(node.value, found)
        return None

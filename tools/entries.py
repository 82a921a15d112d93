"""What runs for a request in a codebase read by tools/codebase.py: its
views (functions under a route decorator, `@app.route`, `@bp.get`, ...,
given to `add_url_rule(view_func=...)`, a MethodView's get/post/..., a
Falcon responder `on_get`, ...) and its hooks (`before_request`, error
handlers, Flask-Login's `user_loader`, ...), registered by a decorator or by
a call, wherever the function is defined (tools/origins.py finds it)."""

import ast

from tools.codebase import walk

ROUTE_DECORATORS = {"route", "get", "post", "put", "patch", "delete", "websocket"}
VIEW_METHODS = {"get", "post", "put", "patch", "delete", "head", "options", "dispatch_request"}
RESPONDERS = {f"on_{verb}" for verb in VIEW_METHODS - {"dispatch_request"}}
# What registers a function that runs on requests, as a decorator or called
# with it (`app.before_request(f)`, `app.register_error_handler(500, f)`).
HOOKS = set(
    "before_request before_app_request after_request after_app_request teardown_request"
    " teardown_app_request teardown_appcontext context_processor app_context_processor"
    " url_value_preprocessor errorhandler app_errorhandler register_error_handler"
    " user_loader request_loader".split()
)


def views(index, origins):
    """Every view of the audited modules, in file and line order."""
    registered = set()
    for scope, call in registrations(index):
        if getattr(call.func, "attr", None) == "add_url_rule":
            given = [keyword.value for keyword in call.keywords if keyword.arg == "view_func"]
            registered.update(origins.function(view, scope) for view in given)
    functions = list(index.functions())
    return in_order(f for f in functions if f in registered or is_view(f))


def hooks(index, origins):
    """[(function, the hook's name)] of the audited modules, in file and line order."""
    found = {}
    for function in index.functions():
        for decorator in function.node.decorator_list:
            called = decorator.func if isinstance(decorator, ast.Call) else decorator
            if getattr(called, "attr", None) in HOOKS:
                found[function] = called.attr
    for scope, call in registrations(index):
        hook = getattr(call.func, "attr", None)
        if isinstance(call.func, ast.Call):  # app.errorhandler(404)(handler)
            hook = getattr(call.func.func, "attr", None)
        function = hook in HOOKS and call.args and origins.function(call.args[-1], scope)
        if function:
            found.setdefault(function, hook)
    return [(function, found[function]) for function in in_order(found)]


def registrations(index):
    """(scope, call) of every call in the audited modules, at their top or in a function."""
    for module in index.audited:
        for scope in [module, *module.functions.values()]:
            for node in walk(scope.node.body):
                if isinstance(node, ast.Call):
                    yield scope, node


def in_order(functions):
    return sorted(set(functions), key=lambda f: (str(f.module.path), f.node.lineno))


def is_view(function):
    """Whether a function is a view by its own definition: routed by a
    decorator, a MethodView's method or a Falcon responder."""
    node, owner = function.node, function.owner
    if owner is None:
        return any(
            isinstance(d, ast.Call) and getattr(d.func, "attr", None) in ROUTE_DECORATORS
            for d in node.decorator_list
        )
    if function.name in RESPONDERS:
        return True
    module = function.module
    bases = [module.dotted(base) or "" for base in module.classes[owner].node.bases]
    return function.name in VIEW_METHODS and any(base.endswith("View") for base in bases)

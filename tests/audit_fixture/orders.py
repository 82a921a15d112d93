"""A user's orders, one order, and a new one."""

from flask import Blueprint, request

from .extensions import db
from .models import Order, User
from .tasks import send_receipt

blueprint = Blueprint("orders", __name__)


@blueprint.get("/users/<int:user_id>/orders")
def list_orders(user_id):
    user = User.query.get_or_404(user_id)
    return {"orders": [order.id for order in user.orders]}


@blueprint.get("/orders/<int:order_id>")
def show_order(order_id):
    order = db.get_or_404(Order, order_id)
    return {"id": order.id, "lines": len(order.lines), "total": order.total()}


@blueprint.post("/orders")
def create_order():
    order = Order(user_id=request.json["user_id"])
    db.session.add(order)
    db.session.commit()
    send_receipt.delay(order.id)
    return {"id": order.id}, 201

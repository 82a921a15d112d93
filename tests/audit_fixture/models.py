"""The models: a user's orders load when first read (lazy), an order's lines
with the order (joined)."""

from flask_login import UserMixin

from .extensions import db


class User(UserMixin, db.Model):
    id = db.Column(db.Integer, primary_key=True)
    email = db.Column(db.String(200), unique=True)
    orders = db.relationship("Order", back_populates="user")


class Order(db.Model):
    id = db.Column(db.Integer, primary_key=True)
    user_id = db.Column(db.ForeignKey("user.id"))
    user = db.relationship("User", back_populates="orders", lazy="joined")
    lines = db.relationship("Line", lazy="joined")

    def total(self):
        """Computed from the lines loaded with the order: no query."""
        return sum(line.price * line.quantity for line in self.lines)


class Line(db.Model):
    id = db.Column(db.Integer, primary_key=True)
    order_id = db.Column(db.ForeignKey("order.id"))
    price = db.Column(db.Numeric)
    quantity = db.Column(db.Integer)

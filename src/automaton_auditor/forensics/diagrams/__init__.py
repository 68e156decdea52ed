"""Diagrams written as text: Mermaid, Graphviz DOT and arrow chains (`parse`, `arrows`) turned
into edges, and the shape of a flow (`flow`: fan-out, fan-in, linear) shared by the vision
detective and the comparison with the code.
"""
